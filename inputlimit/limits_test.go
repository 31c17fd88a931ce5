package inputlimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		format Format
		want   string // "" for no error
	}{
		{"small HCL", "a = [[1]]", HCL, ""},
		{"HCL at the size limit", strings.Repeat("#", MaxHCLBytes), HCL, ""},
		{"HCL over the size limit", strings.Repeat("#", MaxHCLBytes+1), HCL, "f: Input too large: it is 1048577 bytes, and the limit is 1048576 bytes (1 MiB)"},
		{"JSON may be larger", `"` + strings.Repeat("x", MaxHCLBytes) + `"`, JSON, ""},
		{"JSON over the size limit", strings.Repeat(" ", MaxJSONBytes+1), JSON, "the limit is 10485760 bytes (10 MiB)"},
		{"HCL too deep", "a = " + strings.Repeat("(", MaxNesting+1), HCL, "f:1:105: Nesting too deep"},
		{"JSON too deep", strings.Repeat("[", MaxNesting+1), JSON, "f:1:101: Nesting too deep at [0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check("f", []byte(tc.src), tc.format)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Check = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(small, 3); err != nil || string(b) != "abc" {
		t.Errorf("ReadFile(small, 3) = %q, %v", b, err)
	}
	if _, err := ReadFile(small, 2); err == nil || !IsLimit(err) || !strings.Contains(err.Error(), "it is 3 bytes, and the limit is 2 bytes") {
		t.Errorf("ReadFile(small, 2) = %v, want a size error", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 2); err == nil || IsLimit(err) {
		t.Errorf("ReadFile(missing) = %v, want the open error", err)
	}
	// A file that never ends is refused after max+1 bytes.
	if _, err := ReadFile("/dev/zero", 1024); err == nil || !strings.Contains(err.Error(), "/dev/zero: Input too large: it is larger than the limit of 1024 bytes (1 KiB)") {
		t.Errorf("ReadFile(/dev/zero) = %v, want a size error", err)
	}
}
