// One contender of bench/consumer in a process of its own, fresh for each run: no other contender's code warms up,
// allocates or shapes Node's HTTP internals beside it, and no earlier run's heap is left for the collector.
// `node --import tsx server.ts '<json>'` with {contender, secret, databaseUrl}; over the IPC channel it sends
// {ready: url} once listening, answers {stored: id} with {stored: boolean}, and closes and exits on {close}.
import {
  bareVerifyOnly,
  type Contender,
  consumerMemory,
  consumerMemoryProcessed,
  consumerPostgres,
  handWrittenDurable,
  urlOf,
} from "./contenders";

export type ContenderName = "bare" | "memory" | "memory+processor" | "postgres" | "hand-written";
export type ServerMessage = { ready: { name: string; url: string } } | { stored: boolean };
export type BenchMessage = { stored: string } | { close: true };

function start(name: ContenderName, secret: string, databaseUrl: string): Promise<Contender> {
  switch (name) {
    case "bare":
      return bareVerifyOnly(secret);
    case "memory":
      return consumerMemory(secret);
    case "memory+processor":
      return consumerMemoryProcessed(secret);
    case "postgres":
      return consumerPostgres(secret, databaseUrl);
    case "hand-written":
      return handWrittenDurable(secret, databaseUrl);
  }
}

const { contender, secret, databaseUrl } = JSON.parse(process.argv[2] ?? "{}") as {
  contender: ContenderName;
  secret: string;
  databaseUrl: string;
};
const send = (message: ServerMessage) => process.send?.(message);
const served = await start(contender, secret, databaseUrl);
process.on("message", (message: BenchMessage) => {
  if ("stored" in message) void served.stored(message.stored).then((stored) => send({ stored }));
  else void served.close().then(() => process.exit(0));
});
// The bench's process gone (a crash, ^C) takes this one with it.
process.on("disconnect", () => process.exit(0));
send({ ready: { name: served.name, url: urlOf(served.server) } });
