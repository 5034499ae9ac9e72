// Package plugins runs kustomize's external plugins as kpipe stages: the
// `generators:`, `transformers:` and `validators:` configs whose apiVersion
// is not `builtin`. It sits beside package stages: package engine asks Load
// for a stages.Stage and runs it like any builtin stage.
//
// # Which plugin runs
//
// A config carrying a KRM function spec (the `config.kubernetes.io/function`
// annotation, or the older `config.k8s.io/function`, `metadata.configFn` or
// `config.kubernetes.io/container`) is a KRM function:
//
//   - `exec: {path, args, envs}` runs a local executable (needs
//     --enable-exec; kustomize skips such a function silently without the
//     flag, kpipe fails naming the flag). A relative path is relative to
//     the kustomization's directory, which is also the working directory.
//   - `container: {image, envs}` runs the image with docker or podman
//     (whichever is found first on PATH), without network, as user nobody;
//     with neither, the build fails saying so.
//
// The function reads a ResourceList (`config.kubernetes.io/v1`) on stdin:
// the resources as `items` (for a generator, the function config itself,
// marked `config.kubernetes.io/local-config`), and the config as
// `functionConfig`. Items carry the index annotations kustomize's reader
// sets, which kpipe strips from the output again. The function prints a
// ResourceList (its `results` are read: a result of severity error, or of
// no severity, fails the build, and a failing function's results are
// quoted in its error) or plain YAML documents.
//
// Any other config is a legacy exec plugin, found as kustomize finds it:
// `<plugin home>/<group>/<version>/<lowercase kind>/<Kind>`, the plugin home
// being the first directory that exists of $KUSTOMIZE_PLUGIN_HOME,
// $XDG_CONFIG_HOME/kustomize/plugin, $HOME/.config/kustomize/plugin and
// $HOME/kustomize/plugin. It is called with the path of a temporary file
// holding the config as its only argument (plus `argsOneLiner` and
// `argsFromFile` arguments), the resources on stdin for a transformer,
// nothing for a generator, in the kustomization's directory, with
// KUSTOMIZE_PLUGIN_CONFIG_STRING (the config) and
// KUSTOMIZE_PLUGIN_CONFIG_ROOT (the kustomization's directory) set.
//
// When that executable does not exist (or is not executable), kpipe looks,
// in this order, for:
//
//   - a Go plugin `<same path>.so`, built with `go build -buildmode=plugin`
//     against package pluginapi (which documents the interface and the
//     version-skew caveat: same Go version, build flags and package
//     versions as kpipe, and a kpipe built with cgo). It is loaded with the
//     standard plugin package; each run makes a fresh instance with the
//     exported NewPlugin, calls Config, then Generate or Transform. It runs
//     inside kpipe: a panic is an error, but a plugin past the timeout can
//     only be abandoned, not killed. The stage's Fingerprint covers the
//     .so's digest and the environment. The standard plugin package is
//     linked only by package plugins/goplugin, whose Open the program passes
//     as Options.GoPlugins; without it a Go plugin fails with
//     ErrNoGoPlugins (the plugin package needs cgo and makes an executable
//     about half again as large).
//   - a KEP-993 plugin: an executable named after the config's API group
//     (`team.example.com` for `apiVersion: team.example.com/v1`), looked
//     for first in $XDG_CONFIG_HOME/kustomize/plugins ($HOME/.config when
//     XDG_CONFIG_HOME is unset; the directory KEP-993 names), then in each
//     directory of PATH, which needs --enable-exec (Options.EnableExec): a
//     repository must not be able to run whatever PATH holds with only
//     --enable-alpha-plugins. Only a group that can be a named API group (a
//     DNS subdomain with a dot) is looked for, so `apiVersion: sh/v1` never
//     runs `sh generate`. A config whose group, version or kind contains a
//     path separator or is "." or ".." never selects any plugin (kustomize
//     joins them into the plugin path unchecked). A generator runs `<exe> generate` with the config on
//     stdin; a transformer or validator runs `<exe> transform` with the
//     config, then `---` and the objects (annotated with their IDs, as for
//     exec plugins), on stdin. Both print objects on stdout; a transformer's
//     output replaces the objects as described below, and an object with the config's
//     own ID that it echoes back is dropped. Exit status 127 means "not
//     supported": nothing is generated, nothing changed, and it is no error
//     (note that shells also exit 127 for a command they cannot find).
//     kpipe runs the plugin once per config, in the listed order (KEP-993
//     lets an implementation batch the configs of a group and leaves the
//     order open), working directory the kustomization's, with the process
//     environment; it does not run `transform` implicitly for configs listed
//     under `generators:` as the KEP suggests: list the config under
//     `transformers:` too for that.
//
// With none of them, the build fails naming every place it looked.
//
// Generated objects carry the generator options the plugin asks for with
// the annotations `kustomize.config.k8s.io/needs-hash` and
// `kustomize.config.k8s.io/behavior`, which are removed. A transformer's
// output replaces the input objects of the same current ID (they keep
// their build state), adds new ones and drops the ones it left out, as
// kustomize does. With origin annotations (buildMetadata), a generator
// gives the objects it makes its config's origin before they are merged
// (stages.OriginGenerator); package engine wraps transformers with the
// transformer annotation.
//
// NewFunctionCommand and FunctionCommand run one KRM function outside a
// build, for `kpipe fn run` (package fnrun), which writes its input and
// reads its output itself: there the function's standard error passes
// through, and a failure is reported in os/exec's words, as kustomize's fn
// run does.
//
// # Safety and purity
//
// Plugins run with the user's privileges and see the whole file system:
// there is no sandbox, as kustomize's plugin guide says. Every run is
// bounded by a timeout; a crash, a hang, a non-zero exit or output that is
// not YAML is an error naming the plugin, its config file and the first
// lines of its standard error, and nothing is cached then. What a plugin
// that succeeds writes to standard error is passed on as a warning (on the
// runs that execute it, not on cache hits).
//
// A plugin stage is the one exception to rule 3 of the stage contract
// (package stages): its Run executes a program, which may read anything.
// The contract holds as far as the program is a pure function of what the
// stage fingerprints, which is what --verify-cache checks.
//
// A plugin stage's Fingerprint covers its config, the digest of the
// executable and the exact environment it is given. kpipe passes the
// process environment except the shell's bookkeeping variables (OLDPWD,
// SHLVL, _), with PWD set to the working directory, so that a plugin's
// cache entry is reused from one shell to the next but never when anything
// the plugin can see has changed. A plugin that is not a pure function of
// its input breaks that: `--no-cache-plugins` disables caching for plugin
// stages, and `--verify-cache` re-runs them and reports one whose output
// differs for the same input. Because where a plugin is found depends on
// directories outside the kustomization (the plugin home, PATH), package
// build does not memoize a whole kustomization that runs an external plugin
// (nor the kustomizations that include it): it rebuilds it, taking each
// stage, plugin stages included, from the stage cache.
//
// It imports stages, pluginapi, resource and the internal packages
// resyaml, output, fsread and procgroup, never the standard plugin package
// (TestEngineDoesNotLinkPlugin); the engine imports it, never the reverse.
//
// Stability: kpipe's stable API is the packages kpipe and pluginapi. This
// package is an importable building block with no compatibility promise
// before v1: its names may change in any release.
package plugins
