package cudot_test

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"cudot.example/cudot"
)

// TestBindingVersion: BindingVersion is a plain MAJOR.MINOR.PATCH whose major is the one the loader
// accepts, and it equals the header's CUDOT_VERSION_* when the repository's cudot.h is at hand (the
// test binary may run elsewhere, e.g. copied to a GPU machine).
func TestBindingVersion(t *testing.T) {
	m := regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`).FindStringSubmatch(cudot.BindingVersion)
	if m == nil {
		t.Fatalf("BindingVersion %q is not MAJOR.MINOR.PATCH", cudot.BindingVersion)
	}
	major, _ := strconv.Atoi(m[1])
	if err := cudot.CheckVersion(uint32(major * 10000)); err != nil {
		t.Errorf("BindingVersion %s: the loader refuses its own major version: %v", cudot.BindingVersion, err)
	}
	header, err := os.ReadFile("../../include/cudot.h")
	if err != nil {
		t.Skipf("no cudot.h to compare with: %v", err)
	}
	want := ""
	for _, part := range []string{"MAJOR", "MINOR", "PATCH"} {
		d := regexp.MustCompile(`(?m)^#define CUDOT_VERSION_` + part + ` (\d+)`).FindSubmatch(header)
		if d == nil {
			t.Fatalf("cudot.h has no CUDOT_VERSION_%s", part)
		}
		want += "." + string(d[1])
	}
	if cudot.BindingVersion != want[1:] {
		t.Errorf("BindingVersion %s, cudot.h says %s", cudot.BindingVersion, want[1:])
	}
}
