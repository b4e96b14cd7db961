// Package infra holds Custody's operations stack (operations.yaml), the
// CloudFormation stack deployed beside the application stack
// (template.yaml): the alarm topic the application's alarms publish to and
// the dashboard of /mcp and tasks. Its tests hold the two templates to each
// other and to the code: every alarm names a metric the application emits,
// every dashboard widget names an export of the application stack.
package infra
