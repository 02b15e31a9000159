/**
 * Structured Field Values for HTTP, RFC 9651 (obsoletes RFC 8941): the data model, parsing (§4.2)
 * and serialization (§4.1) of Items, Lists and Dictionaries.
 *
 * Dates (`@`, §3.3.7) and Display Strings (`%"`, §3.3.8), added by RFC 9651, have no
 * {@link BareItem} form: a field using them fails to parse.
 */
export {
  type BareItem,
  isInnerList,
  item,
  type SfInnerList,
  type SfItem,
  type SfMember,
  type SfParameters,
  Token,
} from "./structured-fields-model";
export { parseDictionary, parseItem, parseList } from "./structured-fields-parse";
export { serializeDictionary, serializeItem, serializeList } from "./structured-fields-serialize";
