// A contender's server in a process of its own, as a server runs in production: no other contender's code warms up,
// allocates or shapes Node's HTTP internals beside it. The bench forks the script (startServerProcess), which
// starts its server and calls serveOverIpc; the bench then asks it questions (a check's counts) over the IPC
// channel and closes it. The process inherits the bench's CPU placement (cores.ts pins the bench before it forks).
import { fork } from "node:child_process";
import { AS_BUILT } from "./as-built";

type ToChild = { id: number; question: unknown } | { close: true };
type FromChild = { ready: unknown } | { id: number; answer: unknown };

/** A server process started by {@link startServerProcess}. */
export interface ServerProcess<Ready, Question, Answer> {
  /** What the process sent once its server listened (its URL, …). */
  readonly ready: Ready;
  /** Its process id, for a load generator to read its CPU time (serverCpuNs, server-cpu.ts). */
  readonly pid: number;
  /** Asks the process; resolves with its answer. */
  ask(question: Question): Promise<Answer>;
  /** Closes the server and resolves once the process has exited. */
  close(): Promise<void>;
}

/**
 * Forks `script` (TypeScript, compiled as the package is built: as-built-loader.mjs) with `argument` as JSON and waits
 * until its server listens.
 */
export function startServerProcess<Ready, Question, Answer>(
  script: string,
  argument: unknown,
): Promise<ServerProcess<Ready, Question, Answer>> {
  return new Promise((resolve, reject) => {
    const child = fork(script, [JSON.stringify(argument)], {
      execArgv: [...AS_BUILT],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const waiting = new Map<number, { answer: (answer: Answer) => void; fail: (error: Error) => void }>();
    let asked = 0;
    const send = (message: ToChild) => child.send(message);
    child.on("error", reject);
    // Before it is ready, or while questions wait for it: neither would ever be answered.
    child.on("exit", (code) => {
      const error = new Error(`${script} ${JSON.stringify(argument)} exited with ${code}`);
      reject(error);
      for (const { fail } of waiting.values()) fail(error);
      waiting.clear();
    });
    child.on("message", (message: FromChild) => {
      if ("id" in message) {
        waiting.get(message.id)?.answer(message.answer as Answer);
        waiting.delete(message.id);
        return;
      }
      resolve({
        ready: message.ready as Ready,
        pid: child.pid as number,
        ask: (question) =>
          new Promise((answer, fail) => {
            const id = ++asked;
            waiting.set(id, { answer, fail });
            send({ id, question });
          }),
        close: () =>
          new Promise((done) => {
            child.removeAllListeners("exit");
            child.once("exit", () => done());
            send({ close: true });
          }),
      });
    });
  });
}

/**
 * The server process's side: sends `ready`, answers each question with `answer`, and on close runs `close` and
 * exits. The bench's process gone (a crash, ^C) takes this one with it.
 */
export function serveOverIpc<Question>(
  ready: unknown,
  answer: (question: Question) => unknown,
  close: () => Promise<void>,
): void {
  const send = (message: FromChild) => process.send?.(message);
  process.on("message", (message: ToChild) => {
    if ("close" in message) void close().then(() => process.exit(0));
    else
      void Promise.resolve(answer(message.question as Question)).then((result) =>
        send({ id: message.id, answer: result }),
      );
  });
  process.on("disconnect", () => process.exit(0));
  send({ ready });
}
