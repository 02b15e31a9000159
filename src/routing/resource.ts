import type { Method } from "../http/methods";
import { RoutingError } from "./errors";
import type { UntypedHandler } from "./operation";
import { parseTemplate } from "./template";
import type {
  BodyContext,
  CreateContext,
  Middleware,
  OperationKind,
  OperationSpec,
  ReplaceContext,
  Reply,
  RouteContext,
  UpdateContext,
} from "./types";

/**
 * The method of each operation kind the router knows the rules of (RFC 9110 §9.3, RFC 5789 §2), typed
 * against the method table so a kind can only name a method the table describes.
 */
const OPERATION_METHODS = {
  list: "GET",
  create: "POST",
  read: "GET",
  replace: "PUT",
  update: "PATCH",
  remove: "DELETE",
} as const satisfies Record<Exclude<OperationKind, "custom">, Method>;

type LastSegment<T extends string> = T extends `${string}/${infer Rest}` ? LastSegment<Rest> : T;
type ItemParam<T extends string> = LastSegment<T> extends `{${infer Name}}` ? Name : never;

/** A collection template with the item's parameter removed (used to type `list` and `create`). */
export type CollectionTemplate<T extends string> = T extends `${infer Head}/{${ItemParam<T>}}` ? Head : never;

/** One operation as a resource hands it to the router. */
export interface Declaration {
  readonly method: string;
  readonly template: string;
  readonly kind: OperationKind;
  readonly name: string;
  readonly resource: string | undefined;
  readonly spec: OperationSpec;
  readonly handler: UntypedHandler;
  readonly collection: string | undefined;
  /** Middleware lists from the outermost resource in; read when the router is built. */
  readonly layers: readonly (readonly Middleware[])[];
}

/**
 * Declares a collection and its items together: `list` and `create` act on the collection
 * (`/users`), `read`, `replace`, `update` and `remove` on an item (`/users/{user_id}`), and
 * `resource` nests a collection that belongs to an item (`/users/{user_id}/orders/{order_id}`).
 */
export class ResourceBuilder<T extends string> {
  /** Dotted resource name, e.g. `users.orders`; operation names extend it. */
  readonly name: string;
  /** The item template, e.g. `/users/{user_id}`. */
  readonly template: T;
  /** The collection template, e.g. `/users`. */
  readonly collection: string;
  readonly #declare: (declaration: Declaration) => void;
  readonly #layers: readonly (readonly Middleware[])[];
  readonly #use: Middleware[] = [];

  /** @internal Created by `Router.resource` and `ResourceBuilder.resource`. */
  constructor(
    template: T,
    parent: { name: string; layers: readonly (readonly Middleware[])[] } | undefined,
    declare: (declaration: Declaration) => void,
  ) {
    const parsed = parseTemplate(template);
    const last = parsed.segments[parsed.segments.length - 1];
    if (last?.kind !== "param") {
      throw new RoutingError(
        "invalid_template",
        `Resource template "${template}" must end with the item parameter, e.g. "/users/{user_id}".`,
      );
    }
    const slash = template.lastIndexOf("/");
    const collection = slash === 0 ? "/" : template.slice(0, slash);
    const own = parsed.segments.slice(0, -1).findLast((segment) => segment.kind === "static");
    const local = own?.kind === "static" ? own.value : last.name;
    this.name = parent === undefined ? local : `${parent.name}.${local}`;
    this.template = template;
    this.collection = collection;
    this.#declare = declare;
    this.#layers = [...(parent?.layers ?? []), this.#use];
  }

  #add(kind: OperationKind, method: string, template: string, name: string, spec: OperationSpec, handler: unknown) {
    this.#declare({
      method,
      template,
      kind,
      name,
      resource: this.name,
      spec,
      handler: handler as unknown as UntypedHandler,
      collection: kind === "create" ? this.collection : undefined,
      layers: this.#layers,
    });
    return this;
  }

  /** Adds middleware to every operation of this resource and of the resources nested in it. */
  use(...middleware: Middleware[]): this {
    this.#use.push(...middleware);
    return this;
  }

  /** `GET` on the collection: a list, shaped and filtered by the query. */
  list<S extends OperationSpec>(spec: S, handler: (context: RouteContext<CollectionTemplate<T>, S>) => Reply): this {
    return this.#add("list", OPERATION_METHODS.list, this.collection, `${this.name}.list`, spec, handler);
  }

  /** `POST` on the collection: creates an item; answer with `context.created(id, body)` (201 + Location). */
  create<S extends OperationSpec>(spec: S, handler: (context: CreateContext<CollectionTemplate<T>, S>) => Reply): this {
    return this.#add("create", OPERATION_METHODS.create, this.collection, `${this.name}.create`, spec, handler);
  }

  /** `GET` on an item (HEAD is answered from it). */
  read<S extends OperationSpec>(spec: S, handler: (context: RouteContext<T, S>) => Reply): this {
    return this.#add("read", OPERATION_METHODS.read, this.template, `${this.name}.read`, spec, handler);
  }

  /**
   * `PUT` on an item: replaces it wholesale with the JSON body (RFC 9110 §9.3.4), validated by the body
   * schema when one is given, else handed over parsed as `unknown`.
   */
  replace<S extends OperationSpec>(spec: S, handler: (context: ReplaceContext<T, S>) => Reply): this {
    return this.#add("replace", OPERATION_METHODS.replace, this.template, `${this.name}.replace`, spec, handler);
  }

  /**
   * `PATCH` on an item with a JSON Merge Patch (RFC 7396, `application/merge-patch+json`):
   * `context.merge(current)` applies it and validates the result with the body schema.
   */
  update<S extends OperationSpec>(spec: S, handler: (context: UpdateContext<T, S>) => Reply): this {
    return this.#add("update", OPERATION_METHODS.update, this.template, `${this.name}.update`, spec, handler);
  }

  /** `DELETE` on an item: return `true` when it was deleted (204), `false` when there was none (404). */
  remove<S extends OperationSpec>(spec: S, handler: (context: RouteContext<T, S>) => boolean | Promise<boolean>): this {
    return this.#add("remove", OPERATION_METHODS.remove, this.template, `${this.name}.remove`, spec, handler);
  }

  /**
   * A custom operation on an item, at `<item>/<segment>` (e.g. `POST /orders/{order_id}/cancel`).
   * @param segment a literal path segment, also the operation's name within the resource.
   */
  action<S extends OperationSpec>(
    method: string,
    segment: string,
    spec: S,
    handler: (context: BodyContext<T, S>) => Reply,
  ): this {
    return this.#add("custom", method, `${this.template}/${segment}`, `${this.name}.${segment}`, spec, handler);
  }

  /**
   * A custom operation on the item itself (`path` "") or at a path below it that is not a nested resource, e.g.
   * Stripe's `POST /v1/webhook_endpoints/{id}` update or `GET <item>/attempts`. The router routes it (404, 405,
   * HEAD, validation) and applies no method rule.
   * @param path "" for the item, or "/segment…" below it (a template: it may have parameters).
   * @param name the operation's name within the resource: the route is named `<resource>.<name>`.
   */
  route<P extends string, S extends OperationSpec>(
    method: string,
    path: P,
    name: string,
    spec: S,
    handler: (context: BodyContext<`${T}${P}`, S>) => Reply,
  ): this {
    return this.#add("custom", method, `${this.template}${path}`, `${this.name}.${name}`, spec, handler);
  }

  /** Declares a resource that belongs to an item of this one; its template is relative to the item. */
  resource<U extends string>(template: U, build: (resource: ResourceBuilder<`${T}${U}`>) => void): this {
    build(
      new ResourceBuilder(
        `${this.template}${template}` as `${T}${U}`,
        { name: this.name, layers: this.#layers },
        this.#declare,
      ),
    );
    return this;
  }
}
