// Package postbuild applies what `flux build kustomization` does to
// kustomize's output after kustomize has built it, and prints the result as
// flux prints it. It works on kustomize's output text (documents separated
// by "---"), not on kpipe's resource model, so it depends on no build
// engine: the input is `kustomize build` output (kustomize's accumulation
// order, as Flux builds without reordering), the output is flux's stdout.
//
// The steps, in Flux's order (flux2 internal/build, fluxcd/pkg/kustomize,
// fluxcd/pkg/ssa):
//
//  1. variable substitution per resource, when the Flux object has
//     spec.postBuild (Substitute): the opt-out label or annotation
//     kustomize.toolkit.fluxcd.io/substitute: disabled, Flux's envsubst
//     dialect over the resource's text, the result re-read as YAML 1.1;
//     two resources left with one id fail as kustomize's ResMap.Replace
//     fails;
//  2. the owner labels kustomize.toolkit.fluxcd.io/name and /namespace,
//     and the masking of SOPS-encrypted Secrets (MaskSOPS);
//  3. ReadObjects: the objects as apimachinery decodes kustomize's
//     output (YAML 1.1, numbers as int64 or float64), lists expanded,
//     objects without name, kind or apiVersion and kustomize
//     Kustomizations dropped;
//  4. spec.commonMetadata on each object's metadata;
//  5. Encode: each object as sigs.k8s.io/yaml.Marshal writes it (JSON,
//     then go.yaml.in/yaml/v2), followed by "---\n".
//
// It imports internal/flux/envsubst, internal/output (the JSON-to-YAML
// emitter kustomize's output is written with, which is also the last half
// of flux's) and sigs.k8s.io/yaml (YAML 1.1 to JSON exactly as Flux
// converts).
package postbuild
