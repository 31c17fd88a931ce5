package api

import "testing"

func TestJobsValidate(t *testing.T) {
	c, got := recordingAgent(t, `{"DriverConfigValidated":true,"ValidationErrors":["bad"],"Error":"bad","Warnings":""}`)
	r, _, err := c.Jobs().Validate(&Job{ID: String("web")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.DriverConfigValidated || len(r.ValidationErrors) != 1 || r.Error != "bad" {
		t.Errorf("response = %+v", r)
	}
	if g := got(); len(g) != 1 || g[0][:len("PUT /v1/validate/job?")] != "PUT /v1/validate/job?" {
		t.Errorf("requests = %q", g)
	}
}
