package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	nomad "github.com/hashicorp/nomad/api"
)

// TestWebUIWithACLs drives the web UI of an agent with ACLs in headless
// Chromium: without a token the pages say that the request was refused
// and link to the sign-in page; signed in with a token, they load and
// every request carries it; a one-time token in the address signs in.
// It runs in parallel with the other tests (its own agent and browser).
func TestWebUIWithACLs(t *testing.T) {
	t.Parallel()
	chrome := findChromium(t)
	a := startACLAgent(t)
	anon, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	boot, _, err := anon.ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatal(err)
	}
	mgmt, err := nomad.NewClient(&nomad.Config{Address: a.addr, SecretID: boot.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	job := nomad.NewBatchJob("ui-acl", "ui-acl", "global", 50)
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "raw_exec").SetConfig("command", "/bin/true")))
	if _, _, err := mgmt.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, chrome, a.addr)
	forget := func() {
		b.mu.Lock()
		b.problems, b.tokens = nil, nil
		b.mu.Unlock()
	}

	// Anonymous: refused, with the way to sign in.
	b.visit(t, "/ui/jobs", "#jobs a.sign-in")
	if got := b.text(t, "#jobs"); !strings.Contains(got, "Permission denied") || !strings.Contains(got, "Sign in") {
		t.Fatalf("the anonymous jobs page says %q", got)
	}
	b.visit(t, "/ui/clients", "a.sign-in")
	b.click(t, "a.sign-in")
	b.waitJS(t, "the sign-in page", `!!document.querySelector('#token-secret') && location.pathname === '/ui/settings/tokens'`)
	b.waitJS(t, "the anonymous status", textHas("#token-status", "No token is set"))

	// Signed in: the pages load and every request carries the token.
	b.do(t, "type the token", chromedp.SendKeys(chromedp.CSS("#token-secret"), boot.SecretID))
	b.click(t, `.token-form button[type="submit"]`)
	b.waitJS(t, "the token accepted", textHas("#token-status", "Signed in", "management", "Bootstrap Token"))
	forget()
	b.visit(t, "/ui/jobs", `#jobs a[href="/ui/jobs/ui-acl"]`)
	b.visit(t, "/ui/clients", `a[href^="/ui/clients/"]`)
	b.checkClean(t, "signed-in pages")
	b.mu.Lock()
	tokens := b.tokens
	b.mu.Unlock()
	if len(tokens) == 0 {
		t.Fatal("no /v1 request seen")
	}
	for _, tok := range tokens {
		if tok != boot.SecretID {
			t.Fatalf("a /v1 request carried X-Nomad-Token %q, want the signed-in token", tok)
		}
	}

	// A wrong token: the page says so.
	b.visit(t, "/ui/settings/tokens", "#token-secret")
	b.click(t, `.token-form button[type="button"]`)
	b.waitJS(t, "signed out", textHas("#token-status", "No token is set"))
	b.do(t, "type a wrong token", chromedp.SendKeys(chromedp.CSS("#token-secret"), "00000000-0000-0000-0000-000000000000"))
	b.click(t, `.token-form button[type="submit"]`)
	b.waitJS(t, "the token refused", textHas("#token-status", "ACL token not found"))

	// A one-time token in the address signs in.
	b.click(t, `.token-form button[type="button"]`)
	ott, _, err := mgmt.ACLTokens().UpsertOneTimeToken(nil)
	if err != nil {
		t.Fatal(err)
	}
	b.visit(t, "/ui/settings/tokens?ott="+ott.OneTimeSecretID, "#token-secret")
	b.waitJS(t, "signed in by the one-time token", textHas("#token-status", "Signed in", "Bootstrap Token"))
	b.waitJS(t, "the one-time secret gone from the address", `!location.search.includes('ott=')`)
}
