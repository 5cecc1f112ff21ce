package cudot_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cudot.example/cudot"
)

// buildConfigSpy compiles bindings/testing/config_spy.c against include/cudot.h: a library whose
// cudot_init refuses every request with a message that spells out the cudot_config it received, read
// through the header. Skips without a C compiler, or where the test binary runs outside the source tree.
func buildConfigSpy(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the config spy")
	}
	src, err1 := filepath.Abs(filepath.Join("..", "testing", "config_spy.c"))
	include, err2 := filepath.Abs(filepath.Join("..", "..", "include"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for _, f := range []string{src, filepath.Join(include, "cudot.h")} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("needs the source tree: %v", err)
		}
	}
	lib := filepath.Join(t.TempDir(), "libcudot_spy.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-I", include, "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return lib
}

// spyFields reads the "config spy: k=v ..." report out of the load helper's output: the integer
// fields that follow it (the helper's own words come after them).
func spyFields(t *testing.T, out string) map[string]int64 {
	t.Helper()
	i := strings.Index(out, "config spy: ")
	if i < 0 {
		t.Fatalf("no report of the config spy in %q", out)
	}
	fields := map[string]int64{}
	for _, kv := range strings.Fields(out[i+len("config spy: "):]) {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			break
		}
		fields[k] = n
	}
	return fields
}

// TestWaitMSReachesTheLibrary: Options.WaitMS arrives in cudot_config.wait_ms as cudot.h lays it out,
// with the other options in their fields and the header's struct size (the helper's context is int8 x
// float16 on Host, device 0, capacity 1). Without a GPU the real library gives WaitMS no visible effect.
func TestWaitMSReachesTheLibrary(t *testing.T) {
	spy := buildConfigSpy(t)
	for _, w := range []uint32{0, 1, 1234, cudot.DefaultWaitMS, math.MaxUint32} {
		w := w
		t.Run(strconv.FormatUint(uint64(w), 10), func(t *testing.T) {
			out := runLoadHelper(t, "CUDOT_LIBRARY="+spy, helperWaitMSEnv+"="+strconv.FormatUint(uint64(w), 10))
			if !strings.Contains(out, "CUDOT_ERROR_UNSUPPORTED: config spy:") {
				t.Fatalf("New did not report the spy's refusal: %q", out)
			}
			got := spyFields(t, out)
			if got["size"] != got["sizeof"] {
				t.Errorf("the binding passed a config of %d bytes; cudot.h's is %d", got["size"], got["sizeof"])
			}
			want := map[string]int64{"n": 1, "dtype": int64(cudot.Int8), "memory": int64(cudot.Host), "device": 0,
				"y_dtype": int64(cudot.Float16), "wait_ms": int64(w), "rows": 0}
			for k, v := range want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("the library received %s = %d (present: %v), want %d", k, g, ok, v)
				}
			}
		})
	}
}

// TestRowsReachTheLibrary: Options.Rows arrives in cudot_config.rows as cudot.h lays it out, one row (0 or
// 1) as 0, which a library older than 1.10 accepts, with the other options in their fields.
func TestRowsReachTheLibrary(t *testing.T) {
	spy := buildConfigSpy(t)
	for _, c := range []struct{ rows, wire int64 }{{0, 0}, {1, 0}, {2, 2}, {12345, 12345}, {math.MaxInt32, math.MaxInt32}} {
		c := c
		t.Run(strconv.FormatInt(c.rows, 10), func(t *testing.T) {
			out := runLoadHelper(t, "CUDOT_LIBRARY="+spy, helperRowsEnv+"="+strconv.FormatInt(c.rows, 10),
				helperWaitMSEnv+"=77")
			if !strings.Contains(out, "CUDOT_ERROR_UNSUPPORTED: config spy:") {
				t.Fatalf("New did not report the spy's refusal: %q", out)
			}
			got := spyFields(t, out)
			if got["size"] != got["sizeof"] || got["sizeof"] != 40 {
				t.Errorf("the binding passed a config of %d bytes; cudot.h's is %d (40 since 1.13)", got["size"], got["sizeof"])
			}
			want := map[string]int64{"n": 1, "dtype": int64(cudot.Int8), "memory": int64(cudot.Host), "device": 0,
				"y_dtype": int64(cudot.Float16), "wait_ms": 77, "rows": c.wire}
			for k, v := range want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("the library received %s = %d (present: %v), want %d", k, g, ok, v)
				}
			}
		})
	}
}
