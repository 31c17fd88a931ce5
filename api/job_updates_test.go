package api

import "testing"

func TestDeploymentWrites(t *testing.T) {
	body := `{"EvalID":"e1","EvalCreateIndex":9,"DeploymentModifyIndex":9,"RevertedJobVersion":2,"Index":9}`
	tests := []struct {
		name string
		call func(c *Client) (*DeploymentUpdateResponse, error)
		want string
	}{
		{"fail", func(c *Client) (*DeploymentUpdateResponse, error) {
			r, _, err := c.Deployments().Fail("d1", nil)
			return r, err
		}, `PUT /v1/deployment/fail/d1? {"DeploymentID":"d1"}`},
		{"pause", func(c *Client) (*DeploymentUpdateResponse, error) {
			r, _, err := c.Deployments().Pause("d1", true, nil)
			return r, err
		}, `PUT /v1/deployment/pause/d1? {"DeploymentID":"d1","Pause":true}`},
		{"resume", func(c *Client) (*DeploymentUpdateResponse, error) {
			r, _, err := c.Deployments().Pause("d1", false, nil)
			return r, err
		}, `PUT /v1/deployment/pause/d1? {"DeploymentID":"d1","Pause":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, got := recordingAgent(t, body)
			r, err := tc.call(c)
			if err != nil {
				t.Fatal(err)
			}
			if r.EvalID != "e1" || r.RevertedJobVersion == nil || *r.RevertedJobVersion != 2 {
				t.Errorf("response = %+v", r)
			}
			if g := got(); len(g) != 1 || g[0] != tc.want {
				t.Errorf("requests = %q, want %q", g, tc.want)
			}
		})
	}
}
