package giturl

import (
	"strings"
	"testing"
	"time"
)

// The cases are kustomize's (api/internal/git/repospec_test.go), restated:
// what kpipe must accept, and how it splits each URL.
func TestParseGitURL(t *testing.T) {
	for _, tc := range []struct {
		in                    string
		host, repo, path, ref string
		clone                 string
	}{
		{in: "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somedir", host: "https://git-codecommit.us-east-2.amazonaws.com/", repo: "someorg/somerepo", path: "somedir"},
		{in: "https://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somedir?ref=testbranch", host: "https://git-codecommit.us-east-2.amazonaws.com/", repo: "someorg/somerepo", path: "somedir", ref: "testbranch"},
		{in: "https://fabrikops2.visualstudio.com/someorg/somerepo?ref=master", host: "https://fabrikops2.visualstudio.com/", repo: "someorg/somerepo", ref: "master"},
		{in: "http://github.com/someorg/somerepo/somedir", host: "https://github.com/", repo: "someorg/somerepo", path: "somedir"},
		{in: "git@github.com:someorg/somerepo/somedir", host: "git@github.com:", repo: "someorg/somerepo", path: "somedir"},
		{in: "http://github.com/someorg/somerepo.git/somedir", host: "https://github.com/", repo: "someorg/somerepo.git", path: "somedir"},
		{in: "git@github.com:someorg/somerepo.git/somedir", host: "git@github.com:", repo: "someorg/somerepo.git", path: "somedir"},
		{in: "git@gitlab2.sqtools.ru:infra/kubernetes/thanos-base.git?ref=v0.1.0", host: "git@gitlab2.sqtools.ru:", repo: "infra/kubernetes/thanos-base.git", ref: "v0.1.0"},
		{in: "git@bitbucket.org:company/project.git//path?ref=branch", host: "git@bitbucket.org:", repo: "company/project.git", path: "path", ref: "branch"},
		{in: "git@bitbucket.org/company/project.git//path?ref=branch", host: "git@bitbucket.org/", repo: "company/project.git", path: "path", ref: "branch"},
		{in: "ssh://git@bitbucket.org/company/project.git//path?ref=branch", host: "ssh://git@bitbucket.org/", repo: "company/project.git", path: "path", ref: "branch"},
		{in: "https://itfs.mycompany.com/collection/project/_git/somerepos", host: "https://itfs.mycompany.com/", repo: "collection/project/_git/somerepos"},
		{in: "https://itfs.mycompany.com/collection/project/_git/somerepos?version=v1.0.0", host: "https://itfs.mycompany.com/", repo: "collection/project/_git/somerepos", ref: "v1.0.0"},
		{in: "https://itfs.mycompany.com/collection/project/_git/somerepos/somedir?version=v1.0.0", host: "https://itfs.mycompany.com/", repo: "collection/project/_git/somerepos", path: "somedir", ref: "v1.0.0"},
		{in: "git::https://itfs.mycompany.com/collection/project/_git/somerepos", host: "https://itfs.mycompany.com/", repo: "collection/project/_git/somerepos"},
		{in: "https://bitbucket.example.com/scm/project/repository.git", host: "https://bitbucket.example.com/", repo: "scm/project/repository.git"},
		{in: "ssh://git-codecommit.us-east-2.amazonaws.com/someorg/somerepo/somepath", host: "ssh://git-codecommit.us-east-2.amazonaws.com/", repo: "someorg/somerepo", path: "somepath"},
		{in: "git@github.com/someorg/somerepo/somepath", host: "git@github.com:", repo: "someorg/somerepo", path: "somepath"},
		{in: "https://github.com/kubernetes-sigs/kustomize//examples/multibases/dev/?ref=v1.0.6", host: "https://github.com/", repo: "kubernetes-sigs/kustomize", path: "examples/multibases/dev/", ref: "v1.0.6"},
		{in: "file://a/b/c/someRepo.git/somepath?ref=someBranch", host: "file://", repo: "a/b/c/someRepo.git", path: "somepath", ref: "someBranch"},
		{in: "file://a/b/c/someRepo//somepath?ref=someBranch", host: "file://", repo: "a/b/c/someRepo", path: "somepath", ref: "someBranch"},
		{in: "file://a/b/c/someRepo?ref=someBranch", host: "file://", repo: "a/b/c/someRepo", ref: "someBranch"},
		{in: "file:///a/b/c/someRepo?ref=someBranch", host: "file://", repo: "/a/b/c/someRepo", ref: "someBranch"},
		{in: "ssh://git@github.com/kubernetes-sigs/kustomize//examples/multibases/dev?ref=v1.0.6", host: "git@github.com:", repo: "kubernetes-sigs/kustomize", path: "examples/multibases/dev", ref: "v1.0.6"},
		{in: "file:///a/b/c/someRepo", host: "file://", repo: "/a/b/c/someRepo"},
		{in: "file:///", host: "file://", repo: "/"},
		{in: "https://example.org/path/to/repo//examples/multibases/dev", host: "https://example.org/", repo: "path/to/repo", path: "examples/multibases/dev"},
		{in: "https://example.org/path/to/repo.git/examples/multibases/dev", host: "https://example.org/", repo: "path/to/repo.git", path: "examples/multibases/dev"},
		{in: "ssh://alice@example.com/path/to/repo//examples/multibases/dev", host: "ssh://alice@example.com/", repo: "path/to/repo", path: "examples/multibases/dev"},
		{in: "https://authority/org/repo?ref=group/version", host: "https://authority/", repo: "org/repo", ref: "group/version"},
		{in: "https://authority/org/repo/?ref=includes_git/for_some_reason", host: "https://authority/", repo: "org/repo", ref: "includes_git/for_some_reason"},
		{in: "https://authority/org/repo/?ref=includes.git/for_some_reason", host: "https://authority/", repo: "org/repo", ref: "includes.git/for_some_reason"},
		{in: "https://authority/org/repo/%-invalid-uri-so-not-parsable-by-net/url.Parse", host: "https://authority/", repo: "org/repo", path: "%-invalid-uri-so-not-parsable-by-net/url.Parse"},
		{in: "ssh://myusername@bitbucket.org/ourteamname/ourrepositoryname.git//path?ref=branch", host: "ssh://myusername@bitbucket.org/", repo: "ourteamname/ourrepositoryname.git", path: "path", ref: "branch"},
		{in: "file://git@home/path/to/repository.git//path?ref=branch", host: "file://", repo: "git@home/path/to/repository.git", path: "path", ref: "branch"},
		{in: "http://git@home.com/path/to/repository.git//path?ref=branch", host: "http://git@home.com/", repo: "path/to/repository.git", path: "path", ref: "branch"},
		{in: "https://git@home.com/path/to/repository.git//path?ref=branch", host: "https://git@home.com/", repo: "path/to/repository.git", path: "path", ref: "branch"},
		{in: "ssh://git@ssh.github.com:443/YOUR-USERNAME/YOUR-REPOSITORY.git", host: "ssh://git@ssh.github.com:443/", repo: "YOUR-USERNAME/YOUR-REPOSITORY.git"},
		{in: "git@gitlab.com/user:name/YOUR-REPOSITORY.git/path", host: "git@gitlab.com/", repo: "user:name/YOUR-REPOSITORY.git", path: "path"},
		{in: "git@gitlab.com:gitlab-tests/sample-project.git", host: "git@gitlab.com:", repo: "gitlab-tests/sample-project.git"},
		{in: "git@gitlab.com:gitlab-tests/sample-project", host: "git@gitlab.com:", repo: "gitlab-tests/sample-project"},
		{in: "https://username@dev.azure.com/org/project/_git/repo//path/to/kustomization/root", host: "https://username@dev.azure.com/", repo: "org/project/_git/repo", path: "path/to/kustomization/root"},
		{in: "https://org.visualstudio.com/project/_git/repo/path/to/kustomization/root", host: "https://org.visualstudio.com/", repo: "project/_git/repo", path: "path/to/kustomization/root"},
		{in: "ssh://org-12345@github.com/kubernetes-sigs/kustomize", host: "org-12345@github.com:", repo: "kubernetes-sigs/kustomize"},
		{in: "org-12345@github.com/kubernetes-sigs/kustomize", host: "org-12345@github.com:", repo: "kubernetes-sigs/kustomize"},
		{in: "git@gist.github.com:bc7947cb727d7f9217e7862d961a1ffd.git", host: "git@gist.github.com:", repo: "bc7947cb727d7f9217e7862d961a1ffd.git"},
		{in: "https://gist.github.com/bc7947cb727d7f9217e7862d961a1ffd.git", host: "https://gist.github.com/", repo: "bc7947cb727d7f9217e7862d961a1ffd.git"},
		// The host spellings kustomize's permutation test normalizes.
		{in: "gitHub.com/someOrg/someRepo/foo/krusty.txt?ref=group/version", host: "https://github.com/", repo: "someOrg/someRepo", path: "foo/krusty.txt", ref: "group/version"},
		{in: "github.com:kubernetes/website", host: "https://github.com/", repo: "kubernetes/website"},
		{in: "hTTps://github.com/someOrg/someRepo/README.md?ref=v0.1.0", host: "https://github.com/", repo: "someOrg/someRepo", path: "README.md", ref: "v0.1.0"},
		{in: "ssh://git.example.com:7999/someOrg/someRepo?ref=master", host: "ssh://git.example.com:7999/", repo: "someOrg/someRepo", ref: "master"},
		{in: "git::https://gitlab.com/someOrg/someRepo", host: "https://gitlab.com/", repo: "someOrg/someRepo"},
		{in: "git::http://git.example.com/someOrg/someRepo", host: "http://git.example.com/", repo: "someOrg/someRepo"},
		{in: "git::git@github.com:someOrg/someRepo", host: "git@github.com:", repo: "someOrg/someRepo"},
		{in: "org-12345@github.com:someOrg/someRepo//x", host: "org-12345@github.com:", repo: "someOrg/someRepo", path: "x"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s, err := ParseGitURL(tc.in)
			if err != nil {
				t.Fatalf("ParseGitURL(%q): %v", tc.in, err)
			}
			if s.Host != tc.host || s.Repo != tc.repo || s.Path != tc.path || s.Ref != tc.ref {
				t.Errorf("ParseGitURL(%q) = host %q repo %q path %q ref %q, want %q %q %q %q",
					tc.in, s.Host, s.Repo, s.Path, s.Ref, tc.host, tc.repo, tc.path, tc.ref)
			}
			if s.CloneURL() != tc.host+tc.repo {
				t.Errorf("CloneURL() = %q", s.CloneURL())
			}
			if !s.Submodules || s.Timeout != DefaultTimeout {
				t.Errorf("defaults: submodules %v timeout %v", s.Submodules, s.Timeout)
			}
		})
	}
}

func TestParseGitURLRejects(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp":                                 "uri looks like abs path",
		"../../tmp":                            "failed to parse scheme",
		"src/github.com/org/repo/path":         "failed to parse scheme",
		"iauhsdiuashduas":                      "failed to parse scheme",
		"htxxxtp://github.com/":                "failed to parse scheme",
		"ssh://git.example.com":                "failed to parse repo path segment",
		"git::___":                             "failed to parse scheme",
		"https://host?ref=group/version/minor": "failed to parse repo path segment",
		"https://github.com/org/repo.git//path/../../exits/repo": "url path exits repo",
		"github.com!org/repo.git//path":                          "failed to parse scheme",
		"gh:org/repo":                                            "failed to parse scheme",
		"https://github.com/thisisa404.yaml":                     "failed to parse repo path segment",
		"file:////tmp//path/to/whatever":                         "failed to parse repo path segment",
		"git@scp://github.com/org/repo.git//path":                "failed to parse repo path segment",
		"git@ssh://github.com/org/repo.git//path":                "failed to parse repo path segment",
		"base":            "failed to parse scheme",
		"deployment.yaml": "failed to parse scheme",
		"https://":        "failed to parse",
	} {
		_, err := ParseGitURL(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseGitURL(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestParseGitURLQuery(t *testing.T) {
	for _, tc := range []struct {
		query      string
		ref        string
		timeout    time.Duration
		submodules bool
	}{
		{"", "", DefaultTimeout, true},
		{"ref=v1.0.0", "v1.0.0", DefaultTimeout, true},
		{"ref=kustomize/v4.5.7", "kustomize/v4.5.7", DefaultTimeout, true},
		{"version=master", "master", DefaultTimeout, true},
		{"version=master&ref=v1.0.0", "v1.0.0", DefaultTimeout, true},
		{"version=master&submodules=", "master", DefaultTimeout, true},
		{"version=master&submodules=maybe", "master", DefaultTimeout, true},
		{"version=master&submodules=true", "master", DefaultTimeout, true},
		{"version=master&submodules=false", "master", DefaultTimeout, false},
		{"version=master&timeout=", "master", DefaultTimeout, true},
		{"version=master&timeout=jiffy", "master", DefaultTimeout, true},
		{"version=master&timeout=0", "master", DefaultTimeout, true},
		{"version=master&timeout=0s", "master", DefaultTimeout, true},
		{"version=master&timeout=61", "master", 61 * time.Second, true},
		{"version=master&timeout=1m1s", "master", 61 * time.Second, true},
		{"version=master&submodules=false&timeout=1m1s", "master", 61 * time.Second, false},
		{"ref=%zz", "", DefaultTimeout, true}, // unparsable query: defaults
	} {
		s, err := ParseGitURL("https://example.com/org/repo?" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		if s.Ref != tc.ref || s.Timeout != tc.timeout || s.Submodules != tc.submodules {
			t.Errorf("?%s: ref %q timeout %v submodules %v, want %q %v %v", tc.query, s.Ref, s.Timeout, s.Submodules, tc.ref, tc.timeout, tc.submodules)
		}
	}
}

func TestOriginPath(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/org/repo//examples/dev/?ref=v1": "examples/dev",
		"https://github.com/org/repo?ref=v1":                "notCloned",
		"file:///srv/repo.git//a/../b":                      "b",
	} {
		s, err := ParseGitURL(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.OriginPath(); got != want {
			t.Errorf("OriginPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseGitURL: any input parses or fails without panicking; a parsed
// URL has a host, a repository and a positive timeout. (Whether its
// directory stays in the checkout is checked after the fetch, on the real
// path: see engine.loadRemote.)
func FuzzParseGitURL(f *testing.F) {
	for _, s := range []string{"github.com/org/repo//a?ref=v1", "git@host:org/repo.git/a/../b", "file:///r.git//x?timeout=3",
		"https://h/_git/r/x", "ssh://u@h:22/o/r//../x", "git::https://h/o/r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseGitURL(s)
		if err != nil {
			return
		}
		if spec.Repo == "" || spec.Host == "" {
			t.Fatalf("%q: empty host or repository: %+v", s, spec)
		}
		if spec.Timeout <= 0 {
			t.Fatalf("%q: bad query values: %+v", s, spec)
		}
	})
}
