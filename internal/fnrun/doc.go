// Package fnrun runs KRM configuration functions over a directory of
// configuration files and writes the result back, as kustomize's
// `fn run` (once `config run`) does: `kpipe fn run DIR`. It also provides
// `kpipe fn wrap -- CMD`, which turns any command printing YAML into a
// function (Wrap).
//
// # fn run
//
// Run does what `kustomize fn run DIR` (v5.8.2) does, with the same bytes:
// the files it writes back, what --dry-run prints, the function's input,
// standard error and exit status. It reproduces kustomize's kyaml code
// paths (kio.LocalPackageReadWriter, kio.ByteReader and ByteWriter,
// runfn.RunFns, runtimeutil.FunctionFilter, comments.CopyComments,
// order.SyncOrder) on go.yaml.in/yaml/v3 nodes, the library and version
// kyaml uses, so that the encoder prints what kustomize's prints: each
// object keeps its key order, scalar styles and comments, and only what a
// function changed changes. cmd/kpipe's TestFnRunDifferential and
// TestFnRunRandomDifferential run kustomize itself to check this.
//
// Reading: every `*.yaml`, `*.yml` and `*.json` file under DIR, in lexical
// walk order (hidden files included, what a `.krmignore` in DIR lists
// excluded); each document an object annotated with its file (relative to
// DIR, `internal.config.kubernetes.io/path` and `config.kubernetes.io/path`)
// and its index in the file (`...index`, both spellings), single-quoted,
// appended to its annotations.
//
// Functions: the objects carrying a function spec (the
// `config.kubernetes.io/function` annotation, or the older
// `config.k8s.io/function`, `metadata.configFn` or
// `config.kubernetes.io/container`), decoded strictly (an unknown field is
// an error). They run one after the other, each over the output of the
// previous one, deeper directories first, then by directory name, then by
// position in their file. A function sees the objects under its own
// directory (a config in a directory named `functions` is scoped to the
// one above; "under" is a string prefix, as in kustomize, so a function in
// a/ also sees ab/), written as the items of a ResourceList with the
// config as its functionConfig, each item numbered with an id annotation.
// Its output (a ResourceList's items, or plain documents) replaces those
// objects, followed by the ones it did not see; an item that keeps its id
// gets back the comments the function dropped and its keys' order (a
// folded scalar becomes double-quoted on the way, and a field whose kind
// the function changed is an error, as in kustomize); an object without a
// path annotation gets `[<scope>/][<namespace>/]<kind>_<name>.yaml`.
//
// An exec function (`exec: {path, args, envs}`) needs --enable-exec. It
// runs in the directory kpipe was started in (Options.WorkDir), which a
// relative path with a slash is relative to (a bare name is looked up on
// PATH), with kpipe's environment plus its `envs` and the --env entries
// (KEY=VALUE entries with one '=' only, as in kustomize). A container function runs with `docker run`
// as kustomize starts it (podman when docker is missing). A function's
// standard error passes through. A function that fails (exit status,
// timeout) or prints output that is not YAML fails the run with os/exec's
// or the YAML decoder's words, kustomize's, after a plain line naming the
// function, its config and the results it reported; results of a function
// that exits 0 are ignored, as kustomize ignores them. With `deferFailure:
// true` the run goes on and the failure is reported at the end, after the
// files are written. When a function returns no objects at all, the run
// stops there and nothing is written (exit 0).
//
// Writing: each object goes to the file its path annotation names, the
// objects of a file in index order (an object without an index after the
// file's highest one), the runner's path and index annotations removed
// (and an annotations map or metadata left empty with them); a file read
// that no longer holds an object is removed. A file holding one object
// whose name ends in .json is written as JSON. Everything is checked and
// rendered before the first write: a path that is absolute or contains
// "..", names a directory, or leads out of DIR through a symlink fails the
// run and nothing is written. Files are written whole (temporary file and
// rename): an existing file keeps its permission bits, a new one gets 0666
// less the umask, as kustomize's os.WriteFile leaves them. With
// Options.DryRun the objects are printed instead, with their path
// annotations (not their index annotations), and nothing is written.
//
// Where kpipe differs, on purpose:
//
//   - An exec function without --enable-exec is an error naming the flag;
//     kustomize skips it silently (and rewrites the files).
//   - When no function runs, kustomize leaves its internal
//     `internal.config.kubernetes.io/annotations-migration-resource-id`
//     annotation in every object it writes (a bug); kpipe writes the files
//     the same way without it.
//   - A file whose bytes do not change is not rewritten (kustomize rewrites
//     every file; the content is the same, the modification time is not).
//   - A path leading out of DIR through a symlinked directory or file is
//     refused (kustomize writes there).
//   - A function is killed after --plugin-timeout (kustomize waits).
//   - Before kustomize's error line kpipe prints a plain one naming the file
//     and the function (see cmd/kpipe).
//   - A FILE argument reads that file alone, as kustomize does; kpipe then
//     removes no file (kustomize fails trying to).
//   - kustomize pairs the items of lists it knows by their Kubernetes schema
//     (a Deployment's containers, by name) when it copies comments back;
//     kpipe pairs list items by position only, which differs only when a
//     function reorders such a list and drops their comments.
//   - kustomize's other fn run flags (--image, --exec-path, --fn-path,
//     --global-scope, --mount, --network, --results-dir, --log-steps,
//     --as-current-user, reading stdin without DIR) are not supported.
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
// It imports plugins, loaders, resource, stages/smp and the internal
// packages resyaml, output, fsread and procgroup, and go-gitignore
// (kustomize's reader of .krmignore); only the CLI imports it.
package fnrun
