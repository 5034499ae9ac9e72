// Package fnrun runs KRM configuration functions over a directory of
// configuration files and writes the result back, as kustomize's
// `fn run` (once `config run`) does: `kpipe fn run DIR`. It also provides
// `kpipe fn wrap -- CMD`, which turns any command printing YAML into a
// function (Wrap).
//
// # fn run
//
// Run reads every `*.yaml` and `*.yml` file under DIR (recursively,
// skipping files and directories whose names start with a dot), each
// document an object that keeps its file as the annotations
// `internal.config.kubernetes.io/path` and `config.kubernetes.io/path`
// (slash-separated, relative to DIR) and its position as the index
// annotations. The objects that carry a function spec (the
// `config.kubernetes.io/function` annotation, or the older
// `config.k8s.io/function`, `metadata.configFn` or
// `config.kubernetes.io/container`) are the functions; they run one after
// the other, each over the output of the previous one, in kustomize's
// order: functions in deeper directories first, then by directory name,
// then by file and position in the file.
//
// A function sees only the objects in its own directory and below (its
// scope), the function config itself included; a config in a directory
// named `functions` is scoped to the directory above. Its output replaces
// the objects of its scope; the others stay as they were. Functions run
// with package plugins' KRM function runner: the objects as the `items` of
// a ResourceList, the config as its `functionConfig`, `results` of severity
// error failing the run. An exec function (`exec: {path}`) needs
// --enable-exec; a relative path is relative to the directory of the file
// holding the config (kustomize takes it relative to its working
// directory), which is also the function's working directory. A container
// function runs with docker or podman as in a build.
//
// Then each object is written to the file its path annotation names
// (relative to DIR; an absolute path or one leaving DIR is an error), in
// output order, the path and index annotations removed; an object without
// one goes to `[<namespace>/]<kind>_<name>.yaml` (the function runner's
// default; `fn wrap` gives its new objects `config/<name>_<kind>.yaml`).
// A file whose objects are all unchanged is not rewritten, so it keeps its
// comments and layout; a rewritten file is printed as kpipe prints objects
// (keys sorted, comments lost). A file that was read and holds no object
// any more is removed. If a function returns no objects at all, nothing is
// written (as kustomize stops there too). Nothing is written unless every
// function succeeded, but the files are written one by one: an I/O error
// midway can leave some written.
//
// There is no sandbox: functions run with the user's privileges, as in a
// build (see package plugins).
//
// # fn wrap
//
// Wrap reads a ResourceList on stdin and runs CMD with:
//
//   - the environment of kpipe, plus KUST_FUNCTION_CONFIG (the
//     functionConfig as YAML) and one variable per field of the
//     functionConfig's `metadata` and then `spec`, named by the field in
//     upper case (`spec.replicas` is REPLICAS, `metadata.name` is NAME),
//     holding its value when it is a scalar and nothing otherwise; a spec
//     field wins over a metadata field of the same name;
//   - the items on stdin, as a `v1` `List`.
//
// CMD prints objects (a List or ResourceList is unwrapped). Unless
// KUST_MERGE is set to something other than `true` or `1`, they are merged
// into the input items: an object with the ID of an input item is applied
// to it as a strategic-merge patch, others are added. Objects without a
// path annotation get `config/<name>_<kind>.yaml` (both lower case), the
// objects of each file are numbered with index annotations, and the
// result is printed as a ResourceList sorted by path and index. KUST_OVERRIDE_DIR
// (kustomize's overrides) is not supported yet and fails.
//
// It imports plugins, output, resource and stages/smp; only the CLI imports it.
package fnrun
