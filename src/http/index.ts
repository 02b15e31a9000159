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
export * from "./media-type";
export * from "./message";
export * from "./methods";
export * from "./problem";
export * from "./quoted-string";
export * from "./structured-fields";
export * from "./token";
export * from "./validation";
export { withMethod } from "./with-method";
