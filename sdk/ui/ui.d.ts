// Type definitions for ui.js, the toolbridge page helpers (`@toolbridge/sdk/ui`, served at
// /sdk/ui.js): formatting in the tenant's culture, DOM built as text, words for bridge errors,
// form-field problems, every page of a list, and preferences.

import type { BridgeErrorDetail, BridgePagedResult, BridgeReadyInfo, PageOptions } from "./bridge.js";

/** Currencies by region (`NZ` → `NZD`); a culture of any other region formats money without one. */
export declare const CURRENCY_BY_REGION: Readonly<Record<string, string>>;

/** Formatting for one culture. Anything that is not a finite number formats as "–". */
export interface Formatter {
  /** The canonical locale, or `undefined` (the browser's own) when the culture code was not one. */
  readonly locale: string | undefined;
  /** The ISO currency money is shown in: the context's, else the culture's region's in
   * `CURRENCY_BY_REGION`; `undefined` when neither. */
  readonly currency: string | undefined;
  /** The IANA time zone dates and times are shown in: the context's, else the browser's own. */
  readonly timeZone: string;
  /** `12.5` → "$12.50" (en-NZ); without a currency, 2 decimals: "12.50". */
  money(value: unknown): string;
  /** Grouped, with at most `maximumFractionDigits` decimals (default 3). */
  number(value: unknown, maximumFractionDigits?: number): string;
  /** `15` (already a percentage) → "15%"; at most `maximumFractionDigits` decimals (default 2). */
  percent(value: unknown, maximumFractionDigits?: number): string;
  /** An ISO 8601 date or time (or ms, or a Date) as a medium date; text that is no date as it is. */
  date(value: unknown): string;
  /** As `date`, with the time of day. */
  dateTime(value: unknown): string;
}

/** What `formatter` takes from a context (`bridge.context.get()`): each is optional. */
export interface FormatContext {
  cultureCode?: string;
  locale?: string;
  currency?: string;
  timeZone?: string;
}

/** Formatting for `cultureCode` (such as "en-NZ"), or for a whole context
 * (`formatter(await bridge.context.get())`): its locale, currency and time zone. */
export declare function formatter(cultureOrContext?: string | FormatContext | null): Formatter;

/** A child of `h`, `append` and `replace`: nodes as they are, strings and numbers as text. */
export type Child = Node | string | number | null | undefined | false | Child[];

/** The attributes of `h`. */
export interface Attributes {
  /** Event listeners, by event name. */
  on?: { [event: string]: (event: Event) => void };
  /** Properties set on the element (`checked`, `value`, `htmlFor`, …). */
  props?: { [property: string]: unknown };
  /** Set as attributes: `true` as an empty value; `null`, `undefined` and `false` leave it out. */
  [attribute: string]: unknown;
}

/** An element with attributes and children; every string becomes text, never HTML. */
export declare function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes?: Attributes | null,
  ...children: Child[]
): HTMLElementTagNameMap[K];
export declare function h(tag: string, attributes?: Attributes | null, ...children: Child[]): HTMLElement;

/** Appends `children` to `parent` (strings as text nodes) and returns `parent`. */
export declare function append<P extends Node & ParentNode>(parent: P, children: Child[]): P;

/** Replaces everything inside `parent` with `children` and returns `parent`. */
export declare function replace<P extends Node & ParentNode>(parent: P, ...children: Child[]): P;

/** `#…`, a path on this origin, or an http(s) URL as it is; anything else becomes "#". */
export declare function safeHref(value: unknown): string;

/** `text` cut to at most `max` characters (code points), ending in "…". */
export declare function shorten(text: string, max: number): string;

/** What a status message is. */
export type StatusKind = "info" | "success" | "warning" | "error";

/** Shows `message` in `element`, with `data-kind` set to `kind` (default "info"). */
export declare function showStatus(element: HTMLElement, message: string, kind?: StatusKind): void;

/** `bridge.ready()`; rejects with the code `SDK_MISSING` where bridge.js did not load at all. */
export declare function bridgeReady(): Promise<BridgeReadyInfo>;

/** What `describeError` reads of an error: a BridgeError has all of it. */
export interface ErrorLike {
  code?: string;
  message?: string;
  details?: BridgeErrorDetail[];
  retryAfter?: number;
}

/** The words for an error code: a sentence, or a function of the error. */
export type ErrorWording = string | ((error: ErrorLike) => string);

/** Words by error code; `default` for any other code. */
export interface ErrorWords {
  default?: ErrorWording;
  [code: string]: ErrorWording | undefined;
}

/** A sentence a user can act on for each bridge error code, and `default` for any other. */
export declare const ERROR_WORDS: Readonly<ErrorWords>;

/** The words for `error` from `words` (default `ERROR_WORDS`; spread it to change some). */
export declare function describeError(error: unknown, words?: ErrorWords): string;

/** INVALID_PARAMS details as one sentence: "lines[0].qty: must be above 0; …". */
export declare function describeDetails(details: BridgeErrorDetail[] | undefined): string;

/** A form control that can show a problem. */
export type Control = HTMLElement & { id: string };

/** A problem with a control: `[control, message]`. */
export type FieldProblem = [Control, string];

/** The bounds of `readNumber`: at least `min` (more than `min` with `above`), at most `max`. */
export interface NumberBounds {
  min?: number;
  max?: number;
  above?: boolean;
}

/** The number in `input` (NaN when empty); a problem is pushed to `errors` when it is out of bounds. */
export declare function readNumber(input: HTMLInputElement, errors: FieldProblem[], bounds?: NumberBounds): number;

/** Puts `message` under `control` (in its `.field`) and links them with `aria-describedby`. */
export declare function showFieldError(control: Control, message: string): void;

/** Takes `control`'s problem away and gives it back the hint it had. */
export declare function clearFieldError(control: Control): void;

/**
 * Shows each problem (the first for a control with several) and focuses the first control;
 * returns a sentence for the status: "Check the 2 highlighted fields."
 */
export declare function showFieldErrors(errors: FieldProblem[]): string;

/** Clears every problem shown inside `root`. */
export declare function clearFieldErrors(root: ParentNode): void;

/** From now on a field's problem goes as soon as the user edits it. */
export declare function clearErrorsOnEdit(form: HTMLElement): void;

/** One group of repeated fields: its element, its `[data-field]` controls, and its `[data-role]` parts by role in camelCase (`free-form` → `freeForm`). */
export interface RepeatedEntry {
  element: HTMLElement;
  fields: Record<string, HTMLInputElement>;
  legend?: HTMLElement;
  remove?: HTMLButtonElement;
  [part: string]: unknown;
}

/** What `repeatedFields` takes. */
export interface RepeatedFieldsOptions<E extends RepeatedEntry> {
  /** A `<template>` whose first element is one group. */
  template: HTMLTemplateElement;
  /** Where the groups go. */
  container: HTMLElement;
  /** Starts every id: `<prefix>-<n>-<name>`. */
  prefix: string;
  /** What one group is, in lower case: "room" gives "Room 1" and "Remove room 1". */
  noun: string;
  /** The field focused in the group that takes a removed one's place. */
  focus: string;
  /** Runs for each new group before it is shown: listeners, and its own state on the entry. */
  onAdd?: (entry: E) => void;
  /** Runs after every change, with the groups in order. */
  onRenumber?: (entries: E[]) => void;
}

/** A list of repeated groups of fields. */
export interface RepeatedFields<E extends RepeatedEntry> {
  /** The groups, in order (the same array, kept current). */
  readonly entries: E[];
  add(): E;
  remove(entry: E): void;
  /** Leaves one empty group. */
  reset(): void;
  /** While busy, no group can be removed. */
  setBusy(busy: boolean): void;
}

/** Groups of fields repeated as the user needs them, numbered and removable. */
export declare function repeatedFields<E extends RepeatedEntry = RepeatedEntry>(
  options: RepeatedFieldsOptions<E>,
): RepeatedFields<E>;

/** What `loadAllInView` shows its progress in. */
export interface LoadView {
  /** The list, as in a sentence: "the product catalog". */
  what: string;
  status: HTMLElement;
  progress: HTMLProgressElement;
  retry: HTMLElement;
  /** The words for a failure (default `ERROR_WORDS`). */
  words?: ErrorWords;
  pageSize?: number;
}

/** Every item of a list, with its progress shown; `null` after a failure, which `view.status` explains. */
export declare function loadAllInView<T>(list: ListMethod<T>, view: LoadView): Promise<T[] | null>;

/** A bridge list method, such as `(options) => bridge.jobs.list(options)`. */
export type ListMethod<T> = (options: Required<PageOptions>) => Promise<BridgePagedResult<T>>;

/** A page of `pages`: the list's answer plus `loaded`, the items so far. */
export interface LoadedPage<T> extends BridgePagedResult<T> {
  loaded: number;
}

/** Every page of a list in turn; stops after the last, after `maxPages`, or at an empty page. */
export declare function pages<T>(
  list: ListMethod<T>,
  options?: { pageSize?: number; maxPages?: number },
): AsyncGenerator<LoadedPage<T>, void, undefined>;

/** Every item of a list; `onProgress(loaded, totalCount)` after each page. */
export declare function loadAll<T>(
  list: ListMethod<T>,
  options?: { pageSize?: number; onProgress?: (loaded: number, totalCount: number) => void },
): Promise<T[]>;

/** Products looked up by SKU in any letter case. */
export interface SkuIndex<P extends { sku: string }> {
  /** In the catalog's order. */
  readonly products: P[];
  readonly size: number;
  /** The product with this SKU (trimmed, any letter case), or `undefined`. */
  find(sku: string | null | undefined): P | undefined;
}

/** Products by SKU, for the catalog the reference pattern loads once. */
export declare function bySku<P extends { sku: string }>(products: P[]): SkuIndex<P>;

/** The preferences saved under `key` in localStorage; `{}` when none (or storage is off). */
export declare function loadPreferences(key: string): Record<string, unknown>;

/** Saves `values` under `key` in localStorage; whether it could. */
export declare function savePreferences(key: string, values: unknown): boolean;
