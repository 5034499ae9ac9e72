package fluxflags

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/internal/flux/fluxcmd"
)

// check parses args with fluxcmd.ParseCommon and with Parse (pflag, as
// flux does) from the same defaults. Where ParseCommon accepts a command
// line, pflag must take it too and give the same flags and positional
// arguments; where it declines, it must leave the flags as they were.
// It reports whether ParseCommon accepted, and whether pflag did.
func check(t *testing.T, args []string, ns string) (accepted, pflagOK bool) {
	t.Helper()
	fast, full := fluxcmd.NewFlags(ns), fluxcmd.NewFlags(ns)
	pos, ok := fluxcmd.ParseCommon(args, &fast)
	want, err := Parse(args, &full)
	if !ok {
		if !reflect.DeepEqual(fast, fluxcmd.NewFlags(ns)) {
			t.Errorf("%q: ParseCommon declined but changed the flags: %+v", args, fast)
		}
		return false, err == nil
	}
	if err != nil {
		t.Errorf("%q: ParseCommon accepted (positional %q, %+v); pflag fails: %v", args, pos, fast, err)
		return true, false
	}
	if !slices.Equal(pos, want) {
		t.Errorf("%q: positional arguments %q, pflag's %q", args, pos, want)
	}
	if !reflect.DeepEqual(fast, full) {
		t.Errorf("%q: ParseCommon gives\n%+v\npflag\n%+v", args, fast, full)
	}
	return true, true
}

// The command lines scripts and benchmarks run take the fast path, with
// pflag's result; those pflag has rules of its own for are declined.
func TestParseCommonTakes(t *testing.T) {
	for _, line := range []string{
		"app --path ./src --kustomization-file ./ks.yaml --dry-run",
		"--path=./src --kustomization-file=./ks.yaml --dry-run app",
		"app -n apps --path ./src --kustomization-file ks.yaml --dry-run -r",
		"--dry-run --namespace flux-system --path . --kustomization-file ./clusters/ks.yaml --strict-substitute --no-cache apps",
		"apps --path ./a --path ./b --kustomization-file k.yaml --dry-run --in-memory-build --ns-follows-kube-context",
		"apps --kubeconfig /dev/null --context kind --verbose --path=--odd --kustomization-file= --dry-run extra",
		"flux-system --path ./k --kustomization-file ./ks.yaml --dry-run -n flux-system --recursive --local-sources GitRepository/flux-system/flux-system=./",
		"apps --local-sources=A/b/c=./x --local-sources D/e/f=./y --local-sources A/b/c=./z --dry-run --in-memory-build=true --no-cache=false",
		"apps --local-sources A/b/c=./x,D/e/f=./y --local-sources=G/h/i=./z,A/b/c=./w,j=k=l --local-sources m=n,o",
		"apps --ignore-paths a,b --ignore-paths=c --ignore-paths= --ignore-paths=,/d/** --dry-run=false",
		"app -h", "app --help", "--help=false app --path .",
		"",
	} {
		args := strings.Fields(line)
		if accepted, _ := check(t, args, "flux-system"); !accepted {
			t.Errorf("%q: declined", args)
		}
	}
	for _, line := range []string{
		"app --path ./src -- --dry-run", "app - --dry-run", "app -hr", "app -rn apps", "app -napps",
		"app -n=apps", "app --dry-run=1", "app --dry-run=True", "app --path", "app --path --dry-run", "app -n -r",
		"app --ignore-paths \"a,b\"", "app --local-sources a=b,,c=d", "app --local-sources a,b=c=d",
		"app --local-sources \"a=b\"", "app --local-sources ab", "app --timeout 1m",
		"app --kube-api-qps 5", "app --kube-api-burst 5", "app --as-group g", "app --as-user-extra a=b",
		"app --unknown", "app -x", "app ---path x", "app --=x",
	} {
		args := strings.Fields(line)
		if accepted, _ := check(t, args, "flux-system"); accepted {
			t.Errorf("%q: accepted", args)
		}
	}
}

// Random command lines from flux's flags in every form, unknown flags,
// shorthands alone and combined, "--", "-", help, and values that start
// with "-" or hold "=" or commas, or are empty: ParseCommon agrees with
// pflag on every line it accepts (check), and accepts many.
func TestParseCommonAgreesWithPflag(t *testing.T) {
	names := []string{"path", "kustomization-file", "ignore-paths", "dry-run", "strict-substitute", "recursive",
		"local-sources", "in-memory-build", "help", "no-cache", "namespace", "timeout", "ns-follows-kube-context",
		"kube-api-qps", "kube-api-burst", "pat", "Path", "dry", "unknown", "-path", ""}
	names = append(names, fluxcmd.IgnoredStringFlags()...)
	names = append(names, fluxcmd.IgnoredArrayFlags()...)
	names = append(names, fluxcmd.IgnoredBoolFlags()...)
	values := []string{"", "x", "./src", "a,b", "a=b", "Kind/ns/n=./p,K/n/m=q", "-v", "--dry-run", "-", "--",
		"true", "false", "True", "1", "5s", "2.5", " ", "=", ",", "apps", "flux-system", "ks.yaml", `"a=b"`, `a"b`,
		`"a,b",c`, "a=b=c", "a=b,c", "=x", "a=", "a\nb", "a,b\r", " a , b "}
	shorts := []string{"-n", "-r", "-h", "-rn", "-nr", "-rr", "-nfoo", "-n=foo", "-r=true", "-x", "-", "--", "-=", "-n-r"}
	// Half the lines draw from the flags ParseCommon takes, with values
	// that do not start with "-": lines it accepts, with flags repeated.
	plainNames := []string{"path", "kustomization-file", "namespace", "dry-run", "recursive", "kubeconfig", "verbose",
		"ignore-paths", "local-sources"}
	plainValues := []string{"", "x", "./src", "a,b", "a=b", "K/n/x=./y", "a=", "=b", "a=b,c=d", "a=b,c", "a=b,,c=d", "a=b=c,d=e", "a,b=c=d", "apps", "true", "false", " "}
	plainShorts := []string{"-n", "-r"}
	rng := rand.New(rand.NewPCG(48, 52))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	token := func(names, values, shorts []string) []string {
		switch r := rng.IntN(20); {
		case r < 5: // a positional argument, or a value out of place
			return []string{pick(values)}
		case r < 9:
			return []string{"--" + pick(names)}
		case r < 13:
			return []string{"--" + pick(names), pick(values)}
		case r < 16:
			return []string{"--" + pick(names) + "=" + pick(values)}
		case r < 18:
			return []string{pick(shorts), pick(values)}
		default:
			return []string{pick(shorts)}
		}
	}
	const lines = 5000
	var accepted, declinedOK int
	for range lines {
		var args []string
		plain := rng.IntN(2) == 0
		for n := rng.IntN(8); n > 0; n-- {
			if plain {
				args = append(args, token(plainNames, plainValues, plainShorts)...)
			} else {
				args = append(args, token(names, values, shorts)...)
			}
		}
		ns := "flux-system"
		if rng.IntN(4) == 0 {
			ns = "from-env"
		}
		a, ok := check(t, args, ns)
		switch {
		case a:
			accepted++
		case ok:
			declinedOK++
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d command lines: %d accepted by ParseCommon (pflag's result); %d declined that pflag takes; %d that pflag refuses",
		lines, accepted, declinedOK, lines-accepted-declinedOK)
	if accepted < lines/10 || declinedOK < lines/20 {
		t.Errorf("%d accepted, %d declined that pflag takes, of %d: the vocabulary does not test both sides", accepted, declinedOK, lines)
	}
}
