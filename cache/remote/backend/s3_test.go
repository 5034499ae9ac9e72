package backend

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/kpipe/kpipe/cache/remote"
	"github.com/kpipe/kpipe/cache/remote/remotetest"
)

// On AWS a bucket is addressed in the host name when its name can be a
// host label, and over https only without dots (the certificate covers
// one level); elsewhere (MinIO, Ceph, R2 behind a custom endpoint) in the
// path, as minio-go and the AWS SDK address them.
func TestS3Addressing(t *testing.T) {
	for _, tc := range []struct {
		url     string
		virtual bool
	}{
		{"s3://my-cache/ci", true},
		{"s3://my.cache/ci", false},
		{"s3://my.cache/ci?endpoint=http://s3.eu-west-1.amazonaws.com", true},
		{"s3://My_Cache/ci", false},
		{"s3://my-cache/ci?endpoint=https://s3.eu-west-1.amazonaws.com", true},
		{"s3://my-cache/ci?endpoint=http://127.0.0.1:9000", false},
		{"s3://my-cache/ci?endpoint=https://minio.example.com", false},
	} {
		u, _ := url.Parse(tc.url)
		b, err := newS3(u, remote.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if b.virtual != tc.virtual {
			t.Errorf("%s: virtual-host addressing %v, want %v", tc.url, b.virtual, tc.virtual)
		}
	}
}

// Without a configured region, a client of AWS asks the bucket's location
// once and signs for it. MinIO answers the same request and refuses a
// signature for another region than its own, so a MinIO server in
// eu-west-3 stands in for AWS here.
func TestS3FindsTheBucketRegion(t *testing.T) {
	srv := remotetest.StartMinIOIn(t, "eu-west-3")
	u, _ := url.Parse(srv.URL)
	b, err := newS3(u, remote.Options{Timeout: remote.DefaultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := strings.Repeat("ab", 32)
	// Signed for us-east-1, MinIO refuses: the region matters.
	b.regionOnce.Do(func() { b.region = "us-east-1" })
	if err := b.Put(ctx, remote.AC, n, []byte("x")); err == nil {
		t.Fatal("a request signed for us-east-1 was accepted by a server in eu-west-3")
	}
	b, _ = newS3(u, remote.Options{Timeout: remote.DefaultTimeout})
	b.aws = true // ask the location, as for AWS
	if err := b.Put(ctx, remote.AC, n, []byte("x")); err != nil {
		t.Fatalf("Put after finding the region: %v", err)
	}
	if b.region != "eu-west-3" {
		t.Errorf("region %q, want eu-west-3", b.region)
	}
	if got, err := b.Get(ctx, remote.AC, n); err != nil || string(got) != "x" {
		t.Errorf("Get: %q, %v", got, err)
	}
}

func TestIniSection(t *testing.T) {
	data := []byte("[default]\naws_access_key_id = A\n# comment\n[ ci ]\n; comment\nAWS_ACCESS_KEY_ID=B\naws_secret_access_key = s=1\n[other]\naws_access_key_id = C\n")
	keys, err := iniSection(data, "ci")
	if err != nil || keys["aws_access_key_id"] != "B" || keys["aws_secret_access_key"] != "s=1" || len(keys) != 2 {
		t.Errorf("section ci: %v, %v", keys, err)
	}
	if _, err := iniSection([]byte("[broken\n"), "ci"); err == nil {
		t.Error("a section line without ] was accepted")
	}
}

func TestXMLField(t *testing.T) {
	body := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">eu-west-3</LocationConstraint>`)
	for _, tc := range []struct{ body, name, want string }{
		{string(body), "LocationConstraint", "eu-west-3"},
		{`<LocationConstraint xmlns="x"/>`, "LocationConstraint", ""},
		{`<Error><Code>NoSuchKey</Code><Message>it&#39;s &lt;gone&gt;</Message></Error>`, "Message", "it's <gone>"},
		{`<Error><CodeName>x</CodeName><Code>AccessDenied</Code></Error>`, "Code", "AccessDenied"},
		{`<Error></Error>`, "Code", ""},
		{`<Code>`, "Code", ""},
		{`<Code`, "Code", ""},
		{`<Code >x`, "Code", ""},
	} {
		if got := xmlField([]byte(tc.body), tc.name); got != tc.want {
			t.Errorf("xmlField(%q, %s) = %q, want %q", tc.body, tc.name, got, tc.want)
		}
	}
}

// An answer's body comes from the network: no bytes make xmlField fail.
func FuzzXMLField(f *testing.F) {
	f.Add([]byte(`<Error><Code>NoSuchKey</Code></Error>`), "Code")
	f.Add([]byte(`<Code/>`), "Code")
	f.Fuzz(func(t *testing.T, body []byte, name string) {
		_ = xmlField(body, name)
	})
}
