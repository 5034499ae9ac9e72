package cli

import (
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// intersperse puts a command's flags before its arguments, reading them
// as urfave/cli v3 did.
func TestIntersperse(t *testing.T) {
	cases := []struct{ in, want string }{
		{"build DIR -o out.yaml", "build -o out.yaml -- DIR"},
		{"build -o out.yaml DIR", "build -o out.yaml -- DIR"},
		{"build DIR --output=out.yaml --no-cache", "build --output=out.yaml --no-cache -- DIR"},
		{"build DIR --no-cache -- -o x", "build --no-cache -- DIR -o x"},
		{"build DIR -o -- x", "build -o -- -- DIR x"},                 // a value is the next argument, whatever it is
		{"build DIR -1 -o x", "build -- DIR -1 -o x"},                 // -1 and what follows are arguments
		{"build - DIR --no-cache", "build --no-cache -- - DIR"},       // "-" is an argument
		{"build DIR --bogus x", "build --bogus -- DIR x"},             // an unknown flag takes no value
		{"build DIR --output", "build --output"},                      // no value: the flag fails, last
		{"build DIR --jobs 3 -j 4", "build --jobs 3 --jobs 4 -- DIR"}, // two forms: the first name each time
		{"build DIR -j 3 -j=4", "build -j 3 -j=4 -- DIR"},
		{"build DIR -e A=1 --env=B=2", "build --env A=1 --env=B=2 -- DIR"},
		{"build --no-cache", "build --no-cache"},
		{"diff --base X PATH --head Y", "diff --base X --head Y -- PATH"},
		{"fn run DIR --dry-run", "fn run --dry-run -- DIR"},
		{"fn wrap -- CMD --flag", "fn wrap -- CMD --flag"},
		{"edit add configmap NAME --from-literal a=b", "edit add configmap --from-literal a=b -- NAME"},
		{"cache prune --max-size 1MB", "cache prune --max-size 1MB"},
		{"bulid DIR -o x", "bulid DIR -o x"},
		{"--help build", "--help build"},
	}
	for _, tc := range cases {
		args := append([]string{"kpipe"}, strings.Fields(tc.in)...)
		got := intersperse(newRoot(io.Discard, io.Discard, args), args)
		if want := append([]string{"kpipe"}, strings.Fields(tc.want)...); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %q, want %q", tc.in, got[1:], want[1:])
		}
	}
}

// A usage error exits 2 with the error and where the help is on stderr,
// nothing on stdout: a flag kpipe does not have (named as the user typed
// it), a flag's bad value, a required flag missing, flags that need
// another.
func TestUsageError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "../../testdata/examples/prod", "--bogus"}, "Error: unknown flag: --bogus\n(see 'kpipe build --help')\n"},
		{[]string{"cache", "stats", "--bogus"}, "Error: unknown flag: --bogus\n(see 'kpipe cache stats --help')\n"},
		{[]string{"--bogus"}, "Error: unknown flag: --bogus\n(see 'kpipe --help')\n"},
		{[]string{"build", "-x"}, "Error: unknown flag: -x\n(see 'kpipe build --help')\n"},
		{[]string{"build", "../../testdata/examples/prod", "--jobs", "many"}, "Error: invalid value \"many\" for flag --jobs: parse error\n(see 'kpipe build --help')\n"},
		{[]string{"cache", "prune"}, "Error: --max-size is required\n(see 'kpipe cache prune --help')\n"},
		{[]string{"affected"}, "Error: --since is required\n(see 'kpipe affected --help')\n"},
		{[]string{"build-all", "--prune"}, "Error: --prune needs --out-dir\n(see 'kpipe build-all --help')\n"},
		{[]string{"diff", "--format", "yaml", "--no-index", "a", "b"}, ""},
	} {
		code, stdout, stderr := kpipe(t, tc.args...)
		if code != 2 || stdout != "" || (tc.want != "" && stderr != tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// Help reads as it did with urfave/cli v3.
func TestHelpText(t *testing.T) {
	_, build, _ := kpipe(t, "build", "--help")
	for _, want := range []string{
		"\n   kpipe build [options] [DIR or git URL]\n",
		"\n   --output string, -o string ",
		"\n   --helm-api-versions string [ --helm-api-versions string ]  ",
		"\n   --plugin-timeout duration ",
		"(default: \"2GiB\")\n",
		"; read-only unless --remote-cache-write [$KPIPE_REMOTE_CACHE]\n",
		"\n   --no-cache  ",
		"\n   --help, -h  ",
	} {
		if !strings.Contains(build, want) {
			t.Errorf("kpipe build --help lacks %q:\n%s", want, build)
		}
	}
	if strings.Contains(build, "(default: false)") || strings.Contains(build, "COMMANDS:") {
		t.Errorf("kpipe build --help:\n%s", build)
	}
	for _, args := range [][]string{{"cache", "--help"}, {"cache", "help"}, {"help", "cache"}} {
		_, cache, _ := kpipe(t, args...)
		if !strings.Contains(cache, "\n   kpipe cache [command [command options]]\n") || !strings.Contains(cache, "\n   stats   print") || strings.Contains(cache, "help, h") {
			t.Errorf("kpipe %s:\n%s", strings.Join(args, " "), cache)
		}
	}
	_, root, _ := kpipe(t)
	if !strings.Contains(root, "\n   kpipe [global options] [command [command options]]\n") || !strings.Contains(root, "\n   help, h    Shows a list") {
		t.Errorf("kpipe:\n%s", root)
	}
	if code, stats, _ := kpipe(t, "cache", "help", "stats"); code != 0 || !strings.Contains(stats, "kpipe cache stats [options]") {
		t.Errorf("kpipe cache help stats: exit %d\n%s", code, stats)
	}
}

// KPIPE_REMOTE_CACHE gives --remote-cache.
func TestRemoteCacheFromEnvironment(t *testing.T) {
	t.Setenv("KPIPE_REMOTE_CACHE", "http://127.0.0.1:1/cache")
	code, _, stderr := kpipe(t, "build", "../../testdata/examples/prod", "--no-cache")
	if code != 2 || !strings.Contains(stderr, "--remote-cache needs the local cache") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// A flag given under two of its names is accepted, as urfave/cli v3 did
// (v2 refuses two forms of one flag): each is read under the flag's first
// name, and the last value counts.
func TestFlagTwoForms(t *testing.T) {
	code, _, stderr := kpipe(t, "build", "../../testdata/examples/prod", "--no-cache", "--jobs", "x", "-j", "1")
	if code != 2 || !strings.Contains(stderr, `invalid value "x" for flag --jobs`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "out.yaml")
	if code, _, stderr := kpipe(t, "build", "../../testdata/examples/prod", "--no-cache", "--jobs", "1", "-j", "2", "-o", out); code != 0 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
