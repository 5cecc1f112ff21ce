package cudot

// Internal hooks for the black-box tests in package cudot_test.

func LiveContexts() int64 { return live.Load() }

var (
	LibStatusString = libStatusString
	CheckVersion    = checkVersion
)
