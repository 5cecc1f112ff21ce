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
	return runHelperExe(t, os.Args[0], "", env...)
}

// fakeLibrary builds a library with every cudot symbol whose cudot_version returns version.
func fakeLibrary(t *testing.T, version string) string {
	t.Helper()
	code := "unsigned cudot_version(void) { return " + version + "; }\n"
	for _, name := range []string{"init", "get_inputs", "dot", "dot_n", "deinit", "get_memory", "status_string", "last_error"} {
		code += "int cudot_" + name + "(void) { return 0; }\n" // never called: the version is refused first
	}
	return buildLibrary(t, code)
}

// fakeLibrary10 is a working stand-in for a 1.0 library: it has no cudot_get_dtypes and, as 1.0 did,
// accepts a config larger than 16 bytes only if the bytes past 16 are zero. The binding must load it
// and report the element types it asked for.
const fakeLibrary10 = `#include <stddef.h>
#include <stdint.h>
#include <string.h>
static double buffers[2][8];
static char ctx_storage;
static const char *message = "";
unsigned cudot_version(void) { return 10000; }
int cudot_init(void **ctx, size_t n, const uint32_t *cfg) {
	static const char zero[64];
	*ctx = NULL;
	if (cfg && (cfg[0] < 16 || cfg[0] > 64)) { message = "fake 1.0: bad size"; return 1; }
	if (cfg && cfg[0] > 16 && memcmp((const char *)cfg + 16, zero, cfg[0] - 16) != 0) {
		message = "fake 1.0: options newer than 1.0"; return 4;
	}
	if (n > 8) { message = "fake 1.0: n too large"; return 2; }
	*ctx = &ctx_storage;
	return 0;
}
int cudot_get_inputs(void *c, void **x, void **y) { if (x) *x = buffers[0]; if (y) *y = buffers[1]; return 0; }
int cudot_get_memory(const void *c, int32_t *m, int32_t *d) { if (m) *m = 4; if (d) *d = -2; return 0; }
int cudot_dot(void *c, double *r) { *r = 0; return 0; }
int cudot_dot_n(void *c, size_t n, double *r) { *r = 0; return 0; }
int cudot_deinit(void *c) { return 0; }
const char *cudot_status_string(int s) { return "fake"; }
const char *cudot_last_error(const void *c) { return message; }
`

// fakeLibrary112 is fakeLibrary10 grown to a stand-in for 1.12: cudot_get_dtypes, the partials and the
// calls on own arrays, but neither cudot_get_mode nor cudot_join_exact_partials (1.13). The binding must
// refuse the exact mode of contexts and exact partials itself, saying what is missing.
var fakeLibrary112 = strings.Replace(fakeLibrary10, "return 10000;", "return 11200;", 1) + `
int cudot_get_dtypes(const void *c, int32_t *x, int32_t *y) { *x = 5; *y = 5; return 0; }
int cudot_tile_partials(void *c, size_t first, size_t n, void *out) { return 4; }
int cudot_join_partials(int32_t x, int32_t y, const void *p, size_t tiles, double *r) { *r = 0; return 0; }
int cudot_dot_arrays(const void *a, double *r) { return 4; }
int cudot_dot_arrays_async(const void *a, double *r) { return 4; }
int cudot_tile_partials_arrays(const void *a, void *out) { return 4; }
int cudot_register_host(const void *p, size_t bytes) { return 4; }
int cudot_unregister_host(const void *p) { return 4; }
`

// fakeLibrary113 grows fakeLibrary112 to a stand-in for 1.13: the exact mode of contexts and cudot_dot_rows
// of 1.9 to 1.13's 136-byte cudot_rows, which, as those libraries do, accepts a larger struct only while
// the bytes past 136 are zero. The binding must send the canonical rows as zeros there, and refuse the
// exact mode of rows itself (were it sent, this library would answer 4.0, a canonical-looking result).
var fakeLibrary113 = strings.Replace(fakeLibrary112, "return 11200;", "return 11300;", 1) + `
int cudot_get_mode(const void *c, int32_t *mode) { *mode = 0; return 0; }
int cudot_join_exact_partials(const void *p, size_t count, double *r) { *r = 0; return 0; }
int cudot_dot_rows(const uint32_t *r, double *results) {
	static const char zero[4096];
	if (r[0] < 136 || r[0] > 4096) { message = "fake 1.13: bad size"; return 1; }
	if (r[0] > 136 && memcmp((const char *)r + 136, zero, r[0] - 136) != 0) {
		message = "fake 1.13: rows fields newer than 1.13"; return 4;
	}
	results[0] = 4.0;
	return 0;
}
`

// buildLibrary compiles C code into a shared library and returns its path.
func buildLibrary(t *testing.T, code string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build a fake library")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "fake.c")
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

// The hints a failed load ends with (lib_unix.go): with CUDOT_LIBRARY set, and without.
const (
	explicitHint = "CUDOT_LIBRARY must be the full path of a built libcudot.so (e.g. /path/to/build/libcudot.so)"
	searchHint   = "set CUDOT_LIBRARY to the library's full path (e.g. /path/to/build/libcudot.so), or put its folder in LD_LIBRARY_PATH"
)

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
			[]string{"load=false version=false same=true dtypes=int8*float16 err=<nil> partials=ok exact=ok mode=0 " +
				"exact arrays: <nil> rows: <nil> exact rows: <nil>"}},
		{"real library, exact mode", func(*testing.T) []string {
			return []string{"CUDOT_LIBRARY=" + real, helperExactEnv + "=1"}
		}, []string{"load=false version=false same=true dtypes=int8*float16 err=<nil> partials=ok exact=ok mode=1"}},
		// The helper asks for YDType Float16: a 1.0 library refuses the non-zero byte past 16 ...
		{"1.0 library refuses y_dtype", func(t *testing.T) []string { return []string{"CUDOT_LIBRARY=" + buildLibrary(t, fakeLibrary10)} },
			[]string{"load=false version=false same=false dtypes=none", "CUDOT_ERROR_UNSUPPORTED: fake 1.0: options newer than 1.0"}},
		// ... and serves a same-type context, whose types the binding reports without cudot_get_dtypes;
		// without the partials symbols JoinPartials answers ErrUnsupported. The config is the binding's
		// whole one (wait_ms too): zero bytes past the 16 it knows, which it accepts ...
		{"1.0 library without cudot_get_dtypes", func(t *testing.T) []string {
			return []string{"CUDOT_LIBRARY=" + buildLibrary(t, fakeLibrary10), helperSameTypeEnv + "=1"}
		}, []string{"load=false version=false same=true dtypes=int8*int8 err=<nil> partials=unsupported exact=unsupported mode=0"}},
		// ... and a non-zero WaitMS, which it (like any library older than 1.5) refuses.
		{"1.0 library refuses WaitMS", func(t *testing.T) []string {
			return []string{"CUDOT_LIBRARY=" + buildLibrary(t, fakeLibrary10), helperSameTypeEnv + "=1",
				helperWaitMSEnv + "=500"}
		}, []string{"load=false version=false same=false dtypes=none", "CUDOT_ERROR_UNSUPPORTED: fake 1.0: options newer than 1.0"}},
		// The exact mode is refused by the binding, which finds no cudot_get_mode, before the library
		// sees it.
		{"1.0 library: no exact mode", func(t *testing.T) []string {
			return []string{"CUDOT_LIBRARY=" + buildLibrary(t, fakeLibrary10), helperSameTypeEnv + "=1", helperExactEnv + "=1"}
		}, []string{"load=false version=false same=false dtypes=none", "cudot: New: CUDOT_ERROR_UNSUPPORTED: the loaded " +
			"library, 1.0.0, has no exact mode for contexts (cudot_get_mode): Options.Mode 1 needs 1.13"}},
		{"1.12 library: no exact mode", func(t *testing.T) []string {
			return []string{"CUDOT_LIBRARY=" + buildLibrary(t, fakeLibrary112), helperSameTypeEnv + "=1", helperExactEnv + "=1"}
		}, []string{"load=false version=false same=false dtypes=none", "cudot: New: CUDOT_ERROR_UNSUPPORTED: the loaded " +
			"library, 1.12.0, has no exact mode for contexts (cudot_get_mode): Options.Mode 1 needs 1.13",
			"partials=ok exact=unsupported mode=none exact arrays: cudot: TilePartialsExact: CUDOT_ERROR_UNSUPPORTED: " +
				"the loaded library has no cudot_join_exact_partials (exact partials need 1.13)"}},
		{"1.12 library: canonical contexts", func(t *testing.T) []string {
			return []string{"CUDOT_LIBRARY=" + buildLibrary(t, fakeLibrary112), helperSameTypeEnv + "=1"}
		}, []string{"load=false version=false same=true dtypes=int8*int8 err=<nil> partials=ok exact=unsupported mode=0"}},
		// Canonical rows work with a 1.13 library; the exact mode of rows is refused by the binding, saying
		// what is missing, rather than reaching the library.
		{"1.13 library: no exact rows", func(t *testing.T) []string {
			return []string{"CUDOT_LIBRARY=" + buildLibrary(t, fakeLibrary113), helperSameTypeEnv + "=1"}
		}, []string{"same=true dtypes=int8*int8 err=<nil> partials=ok exact=ok mode=0", "rows: <nil> exact rows: " +
			"cudot: DotRowsExact: CUDOT_ERROR_UNSUPPORTED: the loaded library, 1.13.0, has no modes for rows " +
			"(cudot_rows.mode): mode 1 needs 1.14"}},
		// A file that does not load says what CUDOT_LIBRARY must name ...
		{"missing file", func(*testing.T) []string { return []string{"CUDOT_LIBRARY=/nonexistent/libcudot.so"} },
			[]string{"load=true version=false same=true", "/nonexistent/libcudot.so", explicitHint}},
		{"not a library", func(*testing.T) []string { return []string{"CUDOT_LIBRARY=" + notALibrary} },
			[]string{"load=true version=false same=true", explicitHint}},
		{"missing symbols", func(*testing.T) []string { return []string{"CUDOT_LIBRARY=libm.so.6"} },
			[]string{"load=true version=false same=true", "missing symbol cudot_init", explicitHint}},
		// ... and a search that finds nothing names both names tried and says to set CUDOT_LIBRARY.
		{"search finds nothing", func(t *testing.T) []string { return []string{"LD_LIBRARY_PATH=" + t.TempDir()} },
			[]string{"load=true version=false same=true", "libcudot.so.1: cannot open shared object file",
				"also tried libcudot.so", searchHint}},
		{"major version 2", func(t *testing.T) []string { return []string{"CUDOT_LIBRARY=" + fakeLibrary(t, "20100")} },
			[]string{"load=true version=true same=true", "version 2.1.0"}},
		{"search finds libcudot.so.1", func(t *testing.T) []string { return searchDir(t, real, "libcudot.so.1") },
			[]string{"load=false version=false same=true dtypes=int8*float16 err=<nil>"}},
		{"search falls back to libcudot.so", func(t *testing.T) []string { return searchDir(t, real, "libcudot.so") },
			[]string{"load=false version=false same=true dtypes=int8*float16 err=<nil>"}},
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
