//go:build windows

package cudot_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeDLLsEnv names a folder of fake DLLs that scripts/test-windows.sh builds with MinGW (a test
// running under wine has no C compiler): v2\cudot.dll has every cudot_* symbol and reports 2.1.0.
const fakeDLLsEnv = "CUDOT_TEST_FAKE_DLLS"

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o700); err != nil {
		t.Fatal(err)
	}
}

// copyOfThisProgram copies the test binary into a new folder, so that the folder the loader calls
// "the program's own" is one the test controls.
func copyOfThisProgram(t *testing.T) (exe, dir string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	exe = filepath.Join(dir, "helper.exe")
	copyFile(t, self, exe)
	return exe, dir
}

// The hints a failed load ends with (lib_windows.go): with CUDOT_LIBRARY set, and without.
const (
	explicitHintWindows = `CUDOT_LIBRARY must be the full path of a built cudot.dll (e.g. C:\path\to\build\cudot.dll)`
	searchHintWindows   = `set CUDOT_LIBRARY to the library's full path (e.g. C:\path\to\build\cudot.dll), or put cudot.dll ` +
		"beside the program (PATH and the current folder are not searched)"
)

func TestLoadFailuresWindows(t *testing.T) {
	real := os.Getenv("CUDOT_LIBRARY")
	if real == "" {
		t.Skip("needs CUDOT_LIBRARY (the full path of cudot.dll) to place copies of it; scripts/test-windows.sh runs this with it set")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	notALibrary := filepath.Join(t.TempDir(), "cudot.dll")
	if err := os.WriteFile(notALibrary, []byte("not a PE file"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := "load=false version=false same=true dtypes=int8*float16 err=<nil> partials=ok"
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) string
		want []string
	}{
		{"full path", func(t *testing.T) string { return runHelperExe(t, self, work, "CUDOT_LIBRARY="+real) },
			[]string{ok}},
		{"missing file", func(t *testing.T) string {
			return runHelperExe(t, self, work, `CUDOT_LIBRARY=C:\nonexistent\cudot.dll`)
		}, []string{"load=true version=false", `C:\nonexistent\cudot.dll`, explicitHintWindows}},
		{"not a library", func(t *testing.T) string { return runHelperExe(t, self, work, "CUDOT_LIBRARY="+notALibrary) },
			[]string{"load=true version=false", explicitHintWindows}},
		{"major version 2", func(t *testing.T) string {
			dir := os.Getenv(fakeDLLsEnv)
			if dir == "" {
				t.Skip(fakeDLLsEnv + " not set: the fake DLLs are built by scripts/test-windows.sh")
			}
			return runHelperExe(t, self, work, "CUDOT_LIBRARY="+filepath.Join(dir, "v2", "cudot.dll"))
		}, []string{"load=true version=true", "version 2.1.0"}},
		// A bare name: found beside the program ...
		{"beside the program", func(t *testing.T) string {
			exe, dir := copyOfThisProgram(t)
			copyFile(t, real, filepath.Join(dir, "cudot.dll"))
			return runHelperExe(t, exe, work)
		}, []string{ok}},
		// ... but never in the current folder or on PATH (the default search order would take either).
		{"not from the current folder or PATH", func(t *testing.T) string {
			exe, _ := copyOfThisProgram(t)
			planted := t.TempDir()
			copyFile(t, real, filepath.Join(planted, "cudot.dll"))
			return runHelperExe(t, exe, planted, "PATH="+planted+";"+os.Getenv("PATH"))
		}, []string{"load=true version=false", "cudot.dll", searchHintWindows}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.run(t)
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("helper said %q, want it to contain %q", strings.TrimSpace(out), want)
				}
			}
		})
	}
}
