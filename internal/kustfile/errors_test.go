package kustfile

import "testing"

// TestErrorsAsBefore: the decoding errors of kpipe edit read as they did
// when kustfile decoded into types of its own (the outputs below are
// those types' messages), now that it reads the loaders' schema.
func TestErrorsAsBefore(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"- a\n", "invalid Kustomization: json: cannot unmarshal array into Go value of type kustfile.Kustomization"},
		{"configMapGenerator:\n- name: a\n  type: x\n", "invalid Kustomization: json: unknown field \"type\""},
		{"configMapGenerator:\n- name: a\n  Type: x\n", "invalid Kustomization: json: unknown field \"Type\""},
		{"configMapGenerator:\n- name: a\n  type: x\nzzz: 1\n", "invalid Kustomization: json: unknown field \"type\""},
		{"aaa: 1\nconfigMapGenerator:\n- name: a\n  type: x\n", "invalid Kustomization: json: unknown field \"aaa\""},
		{"configMapGenerator:\n- name: a\n  type: x\nnamePrefix: [x]\n", "invalid Kustomization: json: unknown field \"type\""},
		{"commonLabels: [x]\nconfigMapGenerator:\n- name: a\n  type: x\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field Kustomization.commonLabels of type map[string]string"},
		{"configMapGenerator:\n- name: a\n  namespace: n\n", "invalid Kustomization: json: cannot unmarshal bool into Go struct field ConfigMapArgs.configMapGenerator.GeneratorArgs.namespace of type string"},
		{"configMapGenerator: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Kustomization.configMapGenerator of type []kustfile.ConfigMapArgs"},
		{"configMapGenerator: [5]\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Kustomization.configMapGenerator of type kustfile.ConfigMapArgs"},
		{"configMapGenerator:\n- name: a\n  options: {immutable: 5}\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field GeneratorOptions.configMapGenerator.GeneratorArgs.options.immutable of type bool"},
		{"configMapGenerator:\n- name: a\n  options: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field ConfigMapArgs.configMapGenerator.GeneratorArgs.options of type kustfile.GeneratorOptions"},
		{"secretGenerator:\n- name: a\n  type: [x]\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field SecretArgs.secretGenerator.type of type string"},
		{"secretGenerator:\n- name: [a]\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field SecretArgs.secretGenerator.GeneratorArgs.name of type string"},
		{"secretGenerator: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Kustomization.secretGenerator of type []kustfile.SecretArgs"},
		{"secretGenerator: [5]\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Kustomization.secretGenerator of type kustfile.SecretArgs"},
		{"patches:\n- path: a\n  options: {allowNameChange: 5}\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field PatchArgs.patches.options.allowNameChange of type bool"},
		{"patches:\n- path: a\n  options: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Patch.patches.options of type kustfile.PatchArgs"},
		{"patches:\n- path: a\n  target: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Patch.patches.target of type kustfile.Selector"},
		{"patches: [5]\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Kustomization.patches of type kustfile.Patch"},
		{"replacements:\n- source: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field ReplacementField.replacements.source of type kustfile.SourceSelector"},
		{"replacements:\n- path: [x]\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field ReplacementField.replacements.path of type string"},
		{"replacements:\n- targets: [5]\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field ReplacementField.replacements.targets of type kustfile.TargetSelector"},
		{"replacements:\n- targets: [{select: 5}]\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field TargetSelector.replacements.targets.select of type kustfile.Selector"},
		{"replacements: [5]\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Kustomization.replacements of type kustfile.ReplacementField"},
		{"vars:\n- name: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Var.vars.name of type string"},
		{"vars:\n- objref: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Var.vars.objref of type kustfile.VarTarget"},
		{"namePrefix: [x]\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field Kustomization.namePrefix of type string"},
		{"labels: [{pairs: 5}]\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Label.labels.pairs of type map[string]string"},
		{"labels: [{fields: [{path: [x]}]}]\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field FieldSpec.labels.fields.path of type string"},
		{"helmCharts: [{valuesInline: 5}]\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field HelmChart.helmCharts.valuesInline of type map[string]interface {}"},
		{"helmChartInflationGenerator: [{chartName: [x]}]\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field HelmChartArgs.helmChartInflationGenerator.chartName of type string"},
		{"images: [{name: [x]}]\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field Image.images.name of type string"},
		{"replicas: [{count: x}]\n", "invalid Kustomization: json: cannot unmarshal string into Go struct field Replica.replicas.count of type int64"},
		{"sortOptions: {legacySortOptions: {orderFirst: 5}}\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field LegacySortOptions.sortOptions.legacySortOptions.orderFirst of type []string"},
		{"metadata: {name: [x]}\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.name of type string"},
		{"openapi: {path: [x]}\n", "invalid Kustomization: json: cannot unmarshal array into Go struct field Kustomization.openapi of type string"},
		{"generatorOptions: {labels: 5}\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field GeneratorOptions.generatorOptions.labels of type map[string]string"},
		{"helmGlobals: 5\n", "invalid Kustomization: json: cannot unmarshal number into Go struct field Kustomization.helmGlobals of type kustfile.HelmGlobals"},
	} {
		_, err := Parse([]byte(tc.text))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
}
