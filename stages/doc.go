// Package stages holds kpipe's generators and transformers: one stage per
// kustomization field (namespace, namePrefix, labels, images, ...), each
// reachable both from its kustomization field and from a builtin plugin
// config (`apiVersion: builtin`) listed under `transformers:`. Their
// configs are the kustomization's own types (package loaders), and they
// work on the public resource model (package resource), so a program that
// embeds kpipe can write a Stage too and give it to kpipe with a
// Definition (kpipe.Options.Stages).
//
// # The stage contract
//
// The cache (package cache) relies on this contract to skip stages safely;
// every stage must keep it, kpipe's and an embedder's alike.
//
//  1. A stage is configured once, from a plain config value. Anything the
//     stage needs from disk (a patch file, a schema) is read while it is
//     configured, through a loaders.Loader, and becomes part of its config.
//  2. Fingerprint returns a canonical encoding of that whole config: the
//     stage kind, every setting, the field specs it writes to, and the
//     contents of the files it read. Two stages with equal fingerprints
//     produce equal outputs from equal inputs.
//  3. Run is a pure function of the fingerprinted config and the input
//     resources. It reads no clock, no environment variable, no file, no
//     global or package-level state. Its only effect is on the list it is
//     given. (The helm chart inflation runs the helm binary: its config
//     holds the chart's files, the values, the binary's digest and the
//     environment, and Run gives helm a private copy in a temporary
//     directory that it removes. External plugins, package plugins, run
//     programs too: their fingerprint holds the executable's digest and
//     the exact environment, and --verify-cache checks that they are pure.)
//  4. Run edits resources only through List.Edit, which copies a frozen
//     (shared) resource before it is changed, so a base shared by many
//     overlays is never modified by one of them.
//  5. A stage that fails returns an error that names the stage and what was
//     wrong; the list is then undefined and the build stops.
//  6. Keys are relocatable: a Fingerprint holds no absolute path, no
//     working directory and no inode number, only paths relative to the
//     kustomization (or to the tree's root, with .. for bases outside it),
//     file contents and the settings that change output. Tools outside the
//     tree (the helm binary) are named by digest, and a plugin's executable
//     by base name and digest. Output that embeds a path (origin
//     annotations, messages) renders it relative, so a tree copied to
//     another path and built from another directory hits every key and
//     gives bytes identical to a cold build there.
//
// A stage's cache key is therefore digest(kpipe version, Fingerprint(),
// digests of the input resources). (For a library build, the version is
// the executable's Go build ID: an embedder's rebuilt program never meets
// its old entries.) A builtin stage listed by a kustomization is cached
// with the kustomization's node, whose key covers its config; an
// embedder's stage (a Definition's) is cached on its own under that key,
// unless it is Cheap, and the nodes that list one are built again on each
// run, since their keys cannot cover what its code depends on besides the
// config: hence item 2 of the contract above is what makes its cache
// entries sound. A Definition's New is called once per config listed, on
// each build.
//
// It imports loaders, resource, stages/fieldspec, stages/smp and the
// internal packages resyaml, output, procgroup and giturl (the origin of
// remote objects); never the engine, the cache or a package that fetches.
//
// Stability: kpipe's stable API is the packages kpipe and pluginapi. This
// package is an importable building block with no compatibility promise
// before v1: its names may change in any release.
package stages
