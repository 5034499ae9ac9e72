package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kpipe/kpipe/internal/engine"
	"github.com/kpipe/kpipe/loaders"
)

// buildFlags are the `kustomize build` flags of Argo CD's command line
// (kustomize.buildOptions, and the --helm-kube-version and
// --helm-api-versions it derives), mapped onto the engine's options.
type buildFlags struct {
	restriction loaders.Restriction
	alpha, exec bool
	helm        bool
	managedBy   bool
	reorder     string
	helmCommand string
	kubeVersion string
	apiVersions []string
	helmDebug   bool
	env         []string
	// notes are what kustomize writes to its standard error for the
	// flags (deprecations), before anything else.
	notes []string
}

// flagError is a flag kustomize refuses: its message (cobra's words).
type flagError string

func (e flagError) Error() string { return string(e) }

// kustomize v5.8.2's `build` flags: name -> takes a value.
var buildFlagSet = map[string]bool{
	"as-current-user": false, "enable-alpha-plugins": false, "enable-exec": false, "enable-helm": false,
	"env": true, "helm-api-versions": true, "helm-command": true, "helm-debug": false, "helm-kube-version": true,
	"help": false, "load-restrictor": true, "mount": true, "network": false, "network-name": true, "output": true,
	"reorder": true, "enable-managedby-label": false, "stack-trace": false,
}

var shorthands = map[byte]string{'e': "env", 'h': "help", 'o': "output"}

// parseBuildArgs reads args (after `build DIR`) as kustomize's command
// line does; a refused flag is a flagError worded as kustomize's.
func parseBuildArgs(args []string) (*buildFlags, error) {
	f := &buildFlags{}
	set := map[string][]string{}
	var order []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		var name, value string
		hasValue := false
		switch {
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, value, hasValue = strings.Cut(a[2:], "=")
			if _, ok := buildFlagSet[name]; !ok {
				return nil, flagError("unknown flag: --" + name)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1 && a != "--":
			long, ok := shorthands[a[1]]
			if !ok {
				return nil, flagError(fmt.Sprintf("unknown shorthand flag: '%c' in %s", a[1], a))
			}
			name = long
			if len(a) > 2 {
				value, hasValue = strings.TrimPrefix(a[2:], "="), true
			}
		default:
			return nil, flagError(fmt.Sprintf("specify one path to %s", loaders.FileNames[0]))
		}
		if buildFlagSet[name] && !hasValue {
			if i+1 >= len(args) {
				return nil, flagError("flag needs an argument: --" + name)
			}
			i++
			value, hasValue = args[i], true
		}
		if !buildFlagSet[name] {
			if !hasValue {
				value = "true"
			}
			if _, err := strconv.ParseBool(value); err != nil {
				return nil, flagError(fmt.Sprintf("invalid argument %q for %q flag: %v", value, "--"+name, err))
			}
		}
		if _, ok := set[name]; !ok {
			order = append(order, name)
		}
		set[name] = append(set[name], value)
	}
	last := func(name string) string {
		v := set[name]
		if len(v) == 0 {
			return ""
		}
		return v[len(v)-1]
	}
	on := func(name string) bool { b, _ := strconv.ParseBool(last(name)); return b }
	for _, name := range order {
		switch name {
		case "reorder":
			f.notes = append(f.notes, "Flag --reorder has been deprecated, use the new 'sortOptions' field in kustomization.yaml instead.")
		case "enable-managedby-label":
			f.notes = append(f.notes, "Flag --enable-managedby-label has been deprecated, The flag `enable-managedby-label` has been deprecated. Use the `managedByLabel` option in the `buildMetadata` field instead.")
		}
	}
	switch {
	case on("help"):
		return nil, flagError("kpipe does not print kustomize's help: drop --help from kustomize.buildOptions")
	case last("output") != "":
		return nil, flagError("kpipe renders to the repo-server's output: drop --output from kustomize.buildOptions")
	case len(set["mount"]) > 0 || on("network") || on("as-current-user") || last("network-name") != "":
		return nil, flagError("kpipe does not run container functions: --mount, --network, --network-name and --as-current-user are not supported")
	}
	var err error
	if f.restriction, err = loaders.ParseRestriction(last("load-restrictor")); err != nil {
		return nil, flagError(err.Error())
	}
	if v := last("reorder"); v != "" && v != "legacy" && v != "none" || set["reorder"] != nil && v == "" {
		return nil, flagError(fmt.Sprintf("illegal flag value --reorder %s; legal values: [legacy none]", v))
	}
	f.reorder = last("reorder")
	f.alpha, f.exec, f.helm = on("enable-alpha-plugins"), on("enable-exec"), on("enable-helm")
	f.managedBy, f.helmDebug = on("enable-managedby-label"), on("helm-debug")
	f.helmCommand, f.kubeVersion = last("helm-command"), last("helm-kube-version")
	for _, v := range set["helm-api-versions"] {
		f.apiVersions = append(f.apiVersions, splitSlice(v)...)
	}
	for _, v := range set["env"] {
		f.env = append(f.env, v)
	}
	return f, nil
}

// splitSlice splits a string slice flag's value as pflag does (CSV).
func splitSlice(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// plugins reports whether the build may run plugins or functions (which
// see the ARGOCD_APP_* environment).
func (f *buildFlags) plugins() bool { return f.alpha || f.exec }

// options are base with the flags applied; env is the Application's
// ARGOCD_APP_* environment, which plugins get.
func (f *buildFlags) options(base engine.Options, environ, env []string) engine.Options {
	o := base
	o.Reorder, o.ManagedByLabel = f.reorder, f.managedBy
	o.EnableAlphaPlugins, o.EnableExec, o.EnableHelm = f.alpha, f.exec, f.helm
	o.FnEnv = f.env
	if f.helmCommand != "" {
		o.Helm.Command = f.helmCommand
	}
	o.Helm.KubeVersion, o.Helm.APIVersions, o.Helm.Debug = f.kubeVersion, f.apiVersions, f.helmDebug
	if f.plugins() {
		o.PluginEnviron = append(append([]string{}, environ...), env...)
	}
	return o
}

// key tells builds apart that cannot share one graph (options differ).
func (f *buildFlags) key(env []string) string {
	k := fmt.Sprintf("%v|%v|%v|%v|%v|%q|%q|%q|%q|%v|%q", f.restriction, f.alpha, f.exec, f.helm, f.managedBy, f.reorder, f.helmCommand, f.kubeVersion, f.apiVersions, f.helmDebug, f.env)
	if f.plugins() {
		k += fmt.Sprintf("|%q", env)
	}
	return k
}
