// launch.mjs starts fauxqs, the SQS emulator, bound to 127.0.0.1 only
// (fauxqs's own startFauxqs and its CLI listen on every interface), on the
// port in FAUXQS_PORT (unset or 0: a free one), with request logging off.
// It prints one JSON line, {"endpoint":"http://127.0.0.1:PORT"}, once it
// serves, and stops when its standard input closes (the test that started
// it has ended) or on SIGTERM or SIGINT.
//
// fauxqs speaks SQS's AWS JSON 1.0 protocol (X-Amz-Target AmazonSQS.*),
// which aws-sdk-go-v2's service/sqs uses, and builds queue URLs from the
// request's Host header: http://127.0.0.1:PORT/000000000000/<name>.
import { buildApp } from "fauxqs";

const app = buildApp({ logger: false });
const endpoint = await app.listen({ host: "127.0.0.1", port: Number(process.env.FAUXQS_PORT ?? 0) });
process.stdout.write(JSON.stringify({ endpoint }) + "\n");

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await app.close();
  process.exit(0);
}
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.resume();
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, stop);
