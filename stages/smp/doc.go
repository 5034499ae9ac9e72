// Package smp applies Kubernetes strategic-merge patches to object trees
// exactly as kustomize v5.8.0 does (kyaml's merge2 walker, which is not the
// apimachinery implementation): maps merge field by field, a null value
// deletes a field, `$patch: delete|replace|merge` directives act on maps and
// lists, and lists merge by key only where the Kubernetes OpenAPI schema
// says so (containers by name, container ports by containerPort and
// protocol, ...). Other lists are replaced.
//
// kyaml does not implement `$setElementOrder`, `$retainKeys` or
// `$deleteFromPrimitiveList`; like kustomize, this package treats them as
// ordinary fields.
//
// The merge keys of the built-in kinds come from schema_table.go, generated
// by tools/smpgen from the OpenAPI schema kustomize embeds (see
// schema.go). A kustomization's custom OpenAPI document (`openapi: {path:
// FILE}`) is read at run time by FromOpenAPI (openapi.go). A Schema is an
// immutable value passed to Merge: there is no process-wide schema.
//
// It imports only resource.
package smp
