export {
  type AdapterOptions,
  badRequestTarget,
  bodyConsumed,
  bodyLimitOf,
  bodyReadFailed,
  bodyTooLarge,
  contentLength,
  DEFAULT_BODY_LIMIT,
  logError,
  type ReadRequestResult,
  splitTarget,
} from "./adapter-options";
export { type AfterSendResponse, carryAfterSend, takeAfterSend, withAfterSend } from "./after-send";
export {
  type BodyRequest,
  type BodyResult,
  type FormRecord,
  invalidStringProblem,
  jsonBody,
  parseForm,
  parseJsonText,
  parseQuery,
  safeFormBody,
  safeJsonBody,
  safeJsonOrFormBody,
} from "./body";
export {
  type DescribedHeader,
  type DescribedMethods,
  type DescribedResponse,
  describeMiddleware,
  type MiddlewareDescription,
  middlewareDescription,
  type SecurityScheme,
} from "./described";
export { type ForbiddenMemberPlace, forbiddenMemberProblem } from "./forbidden-member";
export { formatHeaderList, splitHeaderList } from "./header-list";
export {
  DEFAULT_JSON_MAX_DEPTH,
  findStringFault,
  type JsonBodyOptions,
  type StringFault,
  type StringFaultAt,
} from "./json-limits";
export { formatMediaType, isJsonMediaType, type MediaType, type MediaTypeInit, parseMediaType } from "./media-type";
export {
  bodyBytes,
  empty,
  type Handler,
  type HttpRequest,
  type HttpResponse,
  header,
  json,
  type QueryRecord,
  type RequestHeaders,
  type ResponseBody,
  type ResponseHeaders,
  text,
} from "./message";
export {
  answeredBy,
  compareMethods,
  definesRequestContent,
  isCacheable,
  isIdempotent,
  isKnownMethod,
  isSafe,
  METHOD_NAMES,
  METHODS,
  type Method,
  type MethodProperties,
  methodProperties,
} from "./methods";
export {
  HTTP_PROBLEM_CODES,
  HttpProblem,
  type HttpProblemCode,
  internalErrorResponse,
  isHttpProblem,
  PROBLEM_CONTENT_TYPE,
  type ProblemDocument,
  type ProblemInit,
  problem,
  reasonPhrase,
} from "./problem";
export type { PrototypeFault, PrototypeFaultAt } from "./prototype-members";
export { queryProblem } from "./query-check";
export { formatQuotedString, formatTokenOrQuotedString, parseQuotedString, readQuotedString } from "./quoted-string";
export {
  type BareItem,
  isInnerList,
  item,
  parseDictionary,
  parseItem,
  parseList,
  type SfInnerList,
  type SfItem,
  type SfMember,
  type SfParameters,
  serializeDictionary,
  serializeItem,
  serializeList,
  Token,
} from "./structured-fields";
export { isToken } from "./token";
export { type FieldError, fieldErrors, validationProblem } from "./validation";
export { withMethod } from "./with-method";
