module cudot.example/go-classic

go 1.19
