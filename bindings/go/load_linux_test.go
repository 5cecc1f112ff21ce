package cudot_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runLoadHelper re-executes this test binary so that it only loads the library (see TestMain), with
// env added to a copy of ours minus CUDOT_LIBRARY.
func runLoadHelper(t *testing.T, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CUDOT_LIBRARY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{loadHelperEnv + "=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	return string(out)
}

// fakeLibrary builds a library with every cudot symbol whose cudot_version returns version.
func fakeLibrary(t *testing.T, version string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build a fake library")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "fake.c")
	code := "unsigned cudot_version(void) { return " + version + "; }\n"
	for _, name := range []string{"init", "get_inputs", "dot", "dot_n", "deinit", "get_memory", "status_string", "last_error"} {
		code += "int cudot_" + name + "(void) { return 0; }\n" // never called: the version is refused first
	}
	if err := os.WriteFile(src, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libfake.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return lib
}

// searchDir offers the real library to the default dlopen search under one name only, through a
// symlink in an otherwise empty LD_LIBRARY_PATH directory (CUDOT_LIBRARY stays unset).
func searchDir(t *testing.T, real, name string) []string {
	t.Helper()
	abs, err := filepath.Abs(real)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(abs, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return []string{"LD_LIBRARY_PATH=" + dir}
}

func TestLoadFailures(t *testing.T) {
	real := os.Getenv("CUDOT_LIBRARY")
	notALibrary := filepath.Join(t.TempDir(), "libcudot.so")
	if err := os.WriteFile(notALibrary, []byte("not an ELF file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  func(t *testing.T) []string
		want []string // substrings of the helper's one-line report
	}{
		{"real library", func(*testing.T) []string { return []string{"CUDOT_LIBRARY=" + real} },
			[]string{"load=false version=false same=true err=<nil>"}},
		{"missing file", func(*testing.T) []string { return []string{"CUDOT_LIBRARY=/nonexistent/libcudot.so"} },
			[]string{"load=true version=false same=true", "/nonexistent/libcudot.so"}},
		{"not a library", func(*testing.T) []string { return []string{"CUDOT_LIBRARY=" + notALibrary} },
			[]string{"load=true version=false same=true"}},
		{"missing symbols", func(*testing.T) []string { return []string{"CUDOT_LIBRARY=libm.so.6"} },
			[]string{"load=true version=false same=true", "missing symbol cudot_init"}},
		{"major version 2", func(t *testing.T) []string { return []string{"CUDOT_LIBRARY=" + fakeLibrary(t, "20100")} },
			[]string{"load=true version=true same=true", "version 2.1.0"}},
		{"search finds libcudot.so.1", func(t *testing.T) []string { return searchDir(t, real, "libcudot.so.1") },
			[]string{"load=false version=false same=true err=<nil>"}},
		{"search falls back to libcudot.so", func(t *testing.T) []string { return searchDir(t, real, "libcudot.so") },
			[]string{"load=false version=false same=true err=<nil>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runLoadHelper(t, tc.env(t)...)
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("helper said %q, want it to contain %q", strings.TrimSpace(out), want)
				}
			}
		})
	}
}
