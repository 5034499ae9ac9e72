package resource

// Kustomize orders kinds the same way in two places: its GVK comparison
// (which sorts field specs and name references) and its legacy output
// order. Both start from these lists.

// DefaultKindOrder returns kustomize's default kind order: the kinds that
// sort first, in order, and the kinds that sort last, in order; every other
// kind sorts in between. The slices are new on every call.
func DefaultKindOrder() (first, last []string) {
	return []string{
			"Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition",
			"ServiceAccount", "PodSecurityPolicy", "Role", "ClusterRole",
			"RoleBinding", "ClusterRoleBinding", "ConfigMap", "Secret", "Endpoints",
			"Service", "LimitRange", "PriorityClass", "PersistentVolume",
			"PersistentVolumeClaim", "Deployment", "StatefulSet", "CronJob",
			"PodDisruptionBudget",
		},
		[]string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
}

// KindRanks maps each kind of first to a negative rank (in order) and each
// kind of last to a positive one; kinds not in the map rank 0.
func KindRanks(first, last []string) map[string]int {
	rank := make(map[string]int, len(first)+len(last))
	for i, k := range first {
		rank[k] = i - len(first)
	}
	for i, k := range last {
		rank[k] = 1 + i
	}
	return rank
}

// OrderKey is the tie-breaking key of kustomize's GVK order:
// "group_version_kind" with "~G", "~V", "~K" standing for empty parts.
func (g GVK) OrderKey() string {
	return orDefault(g.Group, "~G") + "_" + orDefault(g.Version, "~V") + "_" + orDefault(g.Kind, "~K")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
