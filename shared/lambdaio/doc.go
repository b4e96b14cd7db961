// Package lambdaio adapts AWS Lambda's event sources to Custody's handlers.
// Its adapter serves any http.Handler behind each of the three HTTP front
// doors a function can have (docs/decisions.md "Front doors"): an API Gateway
// REST API Lambda proxy integration, in either of the integration's two
// response transfer modes; an API Gateway HTTP API with payload format 2.0,
// which only buffers; and a Lambda function URL whose InvokeMode is
// RESPONSE_STREAM. The REST API's two modes:
//
//   - BUFFERED (the default of an AWS_PROXY integration, Lambda's Invoke API):
//     Adapter.Buffer runs the handler to completion and returns one
//     events.APIGatewayProxyResponse, headers as multiValueHeaders and a body
//     that is base64 unless it is UTF-8 text.
//   - STREAM (the 2025 REST API response streaming, Lambda's
//     InvokeWithResponseStream API): Adapter.Stream returns an
//     events.APIGatewayProxyStreamingResponse, aws-lambda-go's own type for
//     that integration, whose Read emits the JSON prelude (statusCode,
//     headers, multiValueHeaders), the eight NUL bytes that end it, then the
//     body (API Gateway developer guide, "Set up a Lambda proxy integration
//     with payload response streaming", output format). The runtime client
//     (aws-lambda-go/lambda, built with -tags lambda.norpc) posts that reader
//     to the Runtime API as a chunked request with the content type
//     application/vnd.awslambda.http-integration-response, flushing after
//     every chunk, so each Read that returns data reaches Lambda at once.
//
// The other two doors:
//
//   - HTTP API (payload format 2.0): Adapter.BufferHTTPAPI returns one
//     events.APIGatewayV2HTTPResponse, each header once (repeated values
//     joined with commas) and every Set-Cookie in cookies; HTTP APIs do not
//     stream, so nothing reaches the client before the handler returns.
//   - Function URL, RESPONSE_STREAM: Adapter.StreamFunctionURL returns
//     aws-lambda-go's events.LambdaFunctionURLStreamingResponse: the same
//     prelude, delimiter and body as the REST stream, with the headers joined
//     as for the HTTP API (the function URL prelude has no multiValueHeaders).
//
// Which door and mode a function serves is configuration (the function's
// config reads what the template set), never guessed from the event: the
// REST API sends the same proxy event in both modes, and an HTTP API event
// and a function URL event differ only in fields a test event may omit.
// Options.RequestTimeout ends a request's context before a buffered front
// gives up on the invocation (29–30 s against a 15 min function timeout).
//
// # Streaming design
//
// Stream starts the handler in its own goroutine with a ResponseWriter whose
// body goes through a bufio.Writer into an io.Pipe. Like net/http, the writer
// fixes the status and a snapshot of the headers at WriteHeader (explicit, or
// implied by the first Write) and sends them at the handler's first Write or
// Flush, or when it returns having written nothing; Stream waits for that
// commit and only then returns the response, so the prelude carries the
// status and headers the handler chose. The pipe's reader is the response body: a Flush
// pushes the buffered bytes through the pipe to the runtime client, which
// sends them as one chunk, so partial bodies (server-sent events) reach the
// client while the handler still runs. A Write blocks while the runtime has
// not read the previous bytes (back-pressure, no unbounded buffer).
//
// The runtime client closes the response after it has sent it or failed to:
// closing the body cancels the handler's request context, fails its further
// writes, and waits for the handler to return, so no handler outlives its
// invocation. A handler that panics before committing is answered 500 with a
// JSON body; after committing, the stream is broken off with an error, which
// the runtime client reports to Lambda as a function error in the response
// trailers (Lambda-Runtime-Function-Error-Type).
//
// # Requests
//
// NewRequest (REST), NewHTTPAPIRequest and NewFunctionURLRequest (payload
// format 2.0: rawPath, rawQueryString, headers, cookies) build the
// *http.Request a server would. NewRequest: method, path, the
// query from multiValueQueryStringParameters (and queryStringParameters for
// keys the former lacks), headers likewise from multiValueHeaders and
// headers, Host from the Host header (else requestContext.domainName), the
// body decoded from base64 when isBase64Encoded, RemoteAddr from
// requestContext.identity.sourceIp, and as context the invocation's: the
// Lambda deadline and lambdacontext (the Lambda request id).
//
// # Logging
//
// Each invocation ends in exactly one INFO line, "invocation", with the
// method, path, status, body bytes, duration, whether it streamed and the
// API Gateway request id (none behind a function URL); NewLogHandler writes it as JSON with the Lambda
// request id (docs/architecture.md "Logging"). A streamed invocation logs it when the
// handler returns, before the stream's end reaches the runtime, so the line
// belongs to its invocation.
//
// # Cold start
//
// SecretString reads a Secrets Manager secret once, for keys a function
// needs before its first invocation (the cursor sealing key).
package lambdaio
