// Package ondynamo runs the composed /mcp endpoint (shared/server) on the
// DynamoDB engine — dynamostore against the minidyn emulator in process,
// over real HTTP on both sides — and holds it to what docs/decisions.md promises
// there:
//
//   - round trips, pinned exactly per call type (docs/decisions.md "Pipeline
//     choices"): one batch read (credential, session, rate bucket) plus the
//     tool's own reads, and exactly one write on every authenticated path,
//     refusals included; one read and no write for an unknown credential;
//     nothing at all for a missing or malformed one;
//   - a revoked key fails on its next call (docs/architecture.md "The request
//     path", step 2), as on the file engine;
//   - a throttled or unavailable table yields an UNAVAILABLE refusal or an
//     unreadable collection, never an empty success and never internals.
//
// The DynamoDB client's HTTP client is instrumented: requests are counted by
// their X-Amz-Target operation, which is what DynamoDB bills and what a
// Lambda waits for. The package has no API; its tests are the point.
package ondynamo
