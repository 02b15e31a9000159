/** An in-process client for the adapter contract over Fetch `Request`/`Response`: Fetch, Hono, Next.js, Bun, Deno. */
import type { ContractRequest, ContractResponse } from "../http/adapter-contract";
import { patternChunk } from "../http/adapter-contract";

/** Builds `send` for a function that answers a Fetch `Request`. */
export function fetchSender(
  serve: (request: Request) => Response | Promise<Response>,
): (spec: ContractRequest) => Promise<ContractResponse> {
  return async (spec: ContractRequest): Promise<ContractResponse> => {
    let bytesSent = 0;
    let body: BodyInit | undefined = spec.body as BodyInit | undefined;
    const stream = spec.stream;
    if (stream !== undefined) {
      // highWaterMark 0: a chunk is produced only when the adapter reads, so bytesSent counts what it pulled.
      body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            // A Request body cannot wait for the Response: pulling at all is what "held" forbids.
            if (stream.holdUntilResponse) return controller.error(new Error("body pulled before the response"));
            if (bytesSent >= stream.total) return controller.close();
            const size = Math.min(stream.chunk, stream.total - bytesSent);
            controller.enqueue(patternChunk(bytesSent, size));
            bytesSent += size;
          },
        },
        { highWaterMark: 0 },
      );
    }
    const request = new Request(`http://127.0.0.1${spec.path}`, {
      method: spec.method ?? "GET",
      headers: spec.headers,
      body,
      signal: spec.signal,
      duplex: "half",
    } as RequestInit);
    const response = await serve(request);
    const headers: Record<string, string> = {};
    for (const name of response.headers.keys()) headers[name] = response.headers.get(name) as string;
    return { status: response.status, headers, body: new Uint8Array(await response.arrayBuffer()), bytesSent };
  };
}
