package resource

import (
	"strings"
	"testing"
)

func TestAppenderRejectsDuplicates(t *testing.T) {
	rs, err := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := NewList(rs[0])
	add := NewAppender(l)
	if err := add.AppendAll(NewList(rs[1])); err != nil {
		t.Fatal(err)
	}
	// "a" without a namespace is "a" in namespace default.
	dup, _ := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\n"))
	err = add.AppendAll(NewList(dup...))
	if err == nil || !strings.Contains(err.Error(), "already registered id: ConfigMap.v1.[noGrp]/a.default") {
		t.Fatalf("err = %v", err)
	}
	if l.Len() != 2 {
		t.Errorf("len %d after a rejected append, want 2", l.Len())
	}
	if err := NewList(rs...).AppendAll(NewList(rs...)); err == nil {
		t.Errorf("AppendAll of a list onto itself succeeded")
	}
}
