// Package templatecheck checks a template block's template before the job
// is submitted: that it parses in consul-template's language (the one the
// client renders it with) and calls only functions Drover serves.
//
// Where it sits in the data flow: jobspec calls it when it decodes a job
// file, to point at the line and column of the job file; the HTTP API's
// job conversion calls it for jobs submitted as JSON. The client renders
// templates with consul-template itself (client/allocrunner/taskrunner's
// template hook); this package only parses, with consul-template's function
// names (functions.go): it never executes a template.
package templatecheck
