// One contender of bench/consumer in a process of its own (../support/server-process.ts), fresh for each run, so no
// earlier run's heap is left for its collector either. Its argument: {contender, secret, databaseUrl}; it answers
// an event id with whether that event is stored.
import { serveOverIpc } from "../support/server-process";
import {
  bareVerifyKeeping,
  bareVerifyOnly,
  type Contender,
  consumerMemory,
  consumerMemoryProcessed,
  consumerPostgres,
  handWrittenDurable,
  urlOf,
} from "./contenders";

export type ContenderName = "bare" | "keeping" | "memory" | "memory+processor" | "postgres" | "hand-written";
export interface ConsumerReady {
  name: string;
  url: string;
}

function start(name: ContenderName, secret: string, databaseUrl: string): Promise<Contender> {
  switch (name) {
    case "bare":
      return bareVerifyOnly(secret);
    case "keeping":
      return bareVerifyKeeping(secret);
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
const served = await start(contender, secret, databaseUrl);
serveOverIpc<string>(
  { name: served.name, url: urlOf(served.server) } satisfies ConsumerReady,
  (id) => served.stored(id),
  () => served.close(),
);
