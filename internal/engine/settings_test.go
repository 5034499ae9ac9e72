package engine

import (
	"reflect"
	"testing"

	"github.com/kpipe/kpipe/cache"
	"github.com/kpipe/kpipe/loaders"
)

// Every option that changes a build's output changes its settings (and so
// the keys of its cache entries): each field of HelmOptions, found by
// reflection so that a new one cannot be forgotten, and each build flag.
// Settings that differ only in how a list is split do not collide.
func TestSettingsCoverTheOptions(t *testing.T) {
	key := func(o Options, r loaders.Restriction) cache.Key { return settings(cache.NewKey("v", "t"), o, r).Sum() }
	seen := map[cache.Key]string{key(Options{}, loaders.RootOnly): "zero"}
	check := func(name string, o Options, r loaders.Restriction) {
		t.Helper()
		got := key(o, r)
		if other, ok := seen[got]; ok {
			t.Errorf("settings with %s equal those with %s", name, other)
		}
		seen[got] = name
	}
	h := reflect.TypeOf(HelmOptions{})
	for i := 0; i < h.NumField(); i++ {
		var o Options
		f := reflect.ValueOf(&o.Helm).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"a/v1"}))
		default:
			t.Fatalf("HelmOptions.%s: settings does not know a %s field", h.Field(i).Name, f.Kind())
		}
		check("Helm."+h.Field(i).Name, o, loaders.RootOnly)
	}
	check("Reorder", Options{Reorder: "legacy"}, loaders.RootOnly)
	check("ManagedByLabel", Options{ManagedByLabel: true}, loaders.RootOnly)
	check("EnableAlphaPlugins", Options{EnableAlphaPlugins: true}, loaders.RootOnly)
	check("EnableExec", Options{EnableExec: true}, loaders.RootOnly)
	check("EnableHelm", Options{EnableHelm: true}, loaders.RootOnly)
	check("LoadRestrictionsNone", Options{}, loaders.None)
	check("two api versions", Options{Helm: HelmOptions{APIVersions: []string{"a/v1", "b/v1"}}}, loaders.RootOnly)
	check("one api version holding both", Options{Helm: HelmOptions{APIVersions: []string{"a/v1\x04b/v1"}}}, loaders.RootOnly)
	if key(Options{Reorder: "legacy"}, loaders.None) != key(Options{Reorder: "legacy"}, loaders.None) {
		t.Error("settings are not the same for the same options")
	}
}
