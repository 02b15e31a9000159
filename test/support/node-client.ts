/** A real-TCP client for the adapter contract: node:http, the Express and Fastify integrations. */
import { type Agent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { ContractRequest, ContractResponse } from "../http/adapter-contract";
import { patternChunk } from "../http/adapter-contract";

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** Sends one request over real TCP to 127.0.0.1, streaming the body with backpressure when asked. */
export function send(port: number, agent: Agent, spec: ContractRequest): Promise<ContractResponse> {
  return new Promise((resolve, reject) => {
    let bytesSent = 0;
    let responded = false;
    let wake: (() => void) | undefined;
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        agent,
        method: spec.method ?? "GET",
        path: spec.path,
        headers: spec.headers,
        signal: spec.signal,
      },
      (res) => {
        responded = true;
        wake?.();
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: flatten(res.headers),
            body: Buffer.concat(chunks),
            bytesSent,
          }),
        );
        res.on("error", reject);
      },
    );
    // Once the answer is in, a write error (the server closed after a 413) is expected.
    req.on("error", (error) => {
      if (!responded) reject(error);
      wake?.();
    });
    req.on("drain", () => wake?.());
    const stream = spec.stream;
    if (stream === undefined) {
      req.end(spec.body);
      return;
    }
    void (async () => {
      if (stream.holdUntilResponse) {
        req.flushHeaders();
        await new Promise<void>((r) => (wake = r));
      }
      while (bytesSent < stream.total && !responded && !req.destroyed) {
        const size = Math.min(stream.chunk, stream.total - bytesSent);
        const ok = req.write(patternChunk(bytesSent, size));
        bytesSent += size;
        if (!ok) await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
      if (!responded && !req.destroyed) req.end();
    })();
  });
}
