import { createHash } from "node:crypto";
import { type SqlClient, type SqlResult, takesQueryConfig } from "./sql-client";

/** A statement a store runs often: its text, and a name to prepare it under on `pg` connections. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/**
 * Runs a statement; on `pg` clients, when `prepare` is on, as a named prepared statement (parsed once per
 * connection). PGlite and other clients get the text. Turn `prepare` off behind a transaction-pooling proxy.
 */
export function run(client: SqlClient, statement: Statement, values: unknown[], prepare = true): Promise<SqlResult> {
  if (prepare && takesQueryConfig(client)) {
    const config = { name: statement.name, text: statement.text, values };
    return (client as unknown as { query(config: object): Promise<SqlResult> }).query(config);
  }
  return client.query(statement.text, values);
}

/** The number of rows a statement affected (PGlite and `pg` both report `rowCount`). */
export function affected(result: SqlResult): number {
  return result.rowCount ?? 0;
}

/**
 * Statements that differ only by a variant written into their text (a batch size, a walk's reach), so that
 * PostgreSQL can plan each once per connection: the variant's statement is named `<prefix><label>_<key>_<schema tag>`
 * (`label` spells the variant, by default as a string) and made the first time it is asked for.
 */
export function statementVariants<V>(
  prefix: string,
  key: string,
  schema: string,
  text: (variant: V) => string,
  label: (variant: V) => string = String,
): (variant: V) => Statement {
  const made = new Map<string, Statement>();
  return (variant) => {
    const name = label(variant);
    let statement = made.get(name);
    if (statement === undefined) {
      statement = statementNames(`${prefix}${name}`, schema, { [key]: text(variant) })[key] as Statement;
      made.set(name, statement);
    }
    return statement;
  };
}

/**
 * Names a store's prepared statements after the schema they act on (prepared names are per connection and at most
 * 63 bytes, and two schemas' statements must not share one): `<prefix>_<statement>_<12 hex digits of the schema>`.
 */
export function statementNames<K extends string>(
  prefix: string,
  schema: string,
  texts: Readonly<Record<K, string>>,
): Record<K, Statement> {
  const tag = createHash("sha256").update(schema).digest("hex").slice(0, 12);
  const out = {} as Record<K, Statement>;
  for (const key of Object.keys(texts) as K[]) out[key] = { name: `${prefix}_${key}_${tag}`, text: texts[key] };
  return out;
}

/**
 * Whether a statement failed on its data, so that running its rows one by one can succeed for all but the bad one:
 * SQLSTATE class 22 (data exception), 23 (integrity constraint violation) or 54 (program limit exceeded: a key over
 * the B-tree entry size, 54000; JSON nested past the stack, 54001). A lost connection or a shutdown is not.
 */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23") || code.startsWith("54"));
}
