export * from "./adapter-options";
export * from "./after-send";
export * from "./body";
export {
  type DescribedHeader,
  type DescribedMethods,
  type DescribedResponse,
  describeMiddleware,
  type MiddlewareDescription,
  middlewareDescription,
  type SecurityScheme,
} from "./described";
export * from "./header-list";
export {
  DEFAULT_JSON_MAX_DEPTH,
  findStringFault,
  type JsonBodyOptions,
  type StringFault,
  type StringFaultAt,
} from "./json-limits";
export * from "./media-type";
export * from "./message";
export * from "./methods";
export * from "./problem";
export { queryProblem } from "./query-check";
export * from "./quoted-string";
export * from "./structured-fields";
export * from "./token";
export * from "./validation";
export { withMethod } from "./with-method";
