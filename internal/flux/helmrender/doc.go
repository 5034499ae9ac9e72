// Package helmrender renders the HelmReleases of a Flux cluster as
// helm-controller would, each a node of kpipe flux build-all (package
// cluster's Options.HelmReleases): the HelmRelease as its Flux
// Kustomization rendered it, its chart source among the Flux sources the
// cluster renders, its values merged with the ConfigMaps and Secrets the
// cluster renders (package helmrelease, engine-free), then:
//
//   - the chart: from a GitRepository or Bucket path (the repository's own
//     flux-system source, or --local-sources), read through the run's
//     tree (a git revision for kpipe diff --flux), confined to the
//     source; from an HTTP HelmRepository, its version range resolved in
//     the repository's index as source-controller resolves it, the chart
//     pulled and kept by version and digest by the same fetcher as
//     helmCharts charts (fetch.Fetcher.Chart; --offline uses what is
//     kept, and the range's last resolution); from an OCI registry (a
//     HelmRepository of type oci, an OCIRepository by tag or semver
//     range) through the same fetcher (helm pull oci://), an
//     OCIRepository's chart version given the manifest digest as
//     helm-controller gives it;
//   - `helm template` (helmrelease.Template's command) run through
//     stages.RunHelm, only when the build's EnableHelm (--enable-helm)
//     allows it, with the helm engine.ResolveHelm finds;
//   - the post-renderers: each kustomize one an in-memory kustomization
//     ({resources: [helm-output.yaml], patches, images}) built by the
//     engine with Flux's settings (kustomize v5.8.1, no reordering, no
//     plugins); then spec.commonMetadata and helm-controller's origin
//     labels (postbuild.SetCommonMetadata); printed as Flux prints.
//
// The result is cached by content: the chart's digest (the archive's,
// or the chart files' and values files'), the merged values, helm's
// argv, the helm binary's digest and environment, the post-renderers,
// commonMetadata and kpipe's build: a run where none changed runs no
// helm.
//
// It imports cache, internal/engine, internal/fetch, internal/flux,
// internal/flux/cluster, internal/flux/helmrelease,
// internal/flux/postbuild, internal/flux/render, loaders and stages.
package helmrender
