package cache

import "testing"

// TestKeyFieldsDoNotRunTogether: each field is written with its length,
// so moving bytes from one field to the next, splitting a field, or
// changing its type gives another key.
func TestKeyFieldsDoNotRunTogether(t *testing.T) {
	keys := map[Key]string{}
	add := func(name string, k Key) {
		if other, dup := keys[k]; dup {
			t.Errorf("%s and %s have the same key", name, other)
		}
		keys[k] = name
	}
	add("ab,c", NewKey("v", "k").String("ab").String("c").Sum())
	add("a,bc", NewKey("v", "k").String("a").String("bc").Sum())
	add("abc", NewKey("v", "k").String("abc").Sum())
	add("abc,empty", NewKey("v", "k").String("abc").String("").Sum())
	add("other kind", NewKey("v", "kabc").Sum())
	add("other version", NewKey("vk", "abc").Sum())
	add("bool", NewKey("v", "k").Bool(true).Sum())
	add("key", NewKey("v", "k").Key(Digest([]byte("abc"))).Sum())
	long := make([]byte, 1000) // past the builder's first buffer
	add("long", NewKey("v", "k").Bytes(long).Sum())
	add("long+1", NewKey("v", "k").Bytes(append(long, 0)).Sum())

	if NewKey("v", "k").String("ab").String("c").Sum() != NewKey("v", "k").String("ab").String("c").Sum() {
		t.Error("the same fields gave two keys")
	}
}
