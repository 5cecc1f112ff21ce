module cudot.example/cudot

go 1.19
