// Type definitions for bridge.js, the toolbridge SDK (window.bridge 2.1.0).
// Reference them from a tool written in TypeScript:
//   /// <reference path="./bridge.d.ts" />
// Every method returns a Promise and rejects with a BridgeError.

/** The stable error codes a BridgeError carries. */
export type BridgeErrorCode =
  | "INVALID_PARAMS"
  | "NOT_ALLOWED"
  | "NO_OPEN_QUOTE"
  | "QUOTE_LOCKED"
  | "NOT_FOUND"
  | "RATE_LIMITED"
  | "UNAUTHENTICATED"
  | "BACKEND_UNAVAILABLE"
  | "METHOD_NOT_FOUND"
  | "TIMEOUT"
  | "NOT_CONNECTED"
  | "INTERNAL";

/** One broken rule: where (`lines[3].qty`) and what. */
export interface BridgeErrorDetail {
  path: string;
  message: string;
}

/** What every bridge method rejects with. A real `Error`. */
export interface BridgeError extends Error {
  readonly name: "BridgeError";
  readonly code: BridgeErrorCode;
  /** Every violation, for INVALID_PARAMS; empty otherwise. */
  readonly details: BridgeErrorDetail[];
  /** Seconds to wait before retrying, for RATE_LIMITED. */
  readonly retryAfter?: number;
}

/** `bridge.BridgeError`: for `instanceof`, or to make one in a tool's own tests. */
export interface BridgeErrorConstructor {
  (init: { code: BridgeErrorCode; message: string; details?: BridgeErrorDetail[]; retryAfter?: number }): BridgeError;
  readonly prototype: BridgeError;
}

/** A role token. */
export type Role = "super_user" | "admin" | "office" | "field";

export interface BridgeContextDto {
  userName: string;
  userEmail: string;
  userRole: Role;
  tenantName: string;
  tenantId: string;
  cultureCode: string;
}

export interface BridgeCustomerDto {
  id: string;
  name: string;
  email: string;
  phone: string;
}

export interface BridgeProductDto {
  id: string;
  /** Human-readable code, stable across environments (GUIDs are not). */
  sku: string;
  name: string;
  /** Retail sell price. */
  price: number;
  /** Unit-of-measure token, e.g. T_ITEM. */
  unit: string;
}

export interface BridgeTaskTemplateDto {
  /** Pass as `linkedItemId` on a `task` line. */
  id: string;
  code: string;
  name: string;
}

export interface BridgeCostItemDto {
  /** Pass as `linkedItemId` on a `cost` line. */
  id: string;
  code: string;
  name: string;
  /** Cost-item type token, e.g. T_TRAVEL. */
  type: string;
}

export type QuoteStatus = "Draft" | "Sent" | "Accepted" | "Rejected" | "Expired";

export interface BridgeQuoteDto {
  id: string;
  ref: string;
  customerName: string;
  total: number;
  status: QuoteStatus;
  /** ISO 8601 datetime. */
  date: string;
}

export interface BridgeJobDto {
  id: string;
  ref: string;
  customerName: string;
  customerIdGuid: string;
  status: string;
}

export interface BridgePagedResult<T> {
  items: T[];
  totalCount: number;
  /** From 1. */
  page: number;
  pageSize: number;
}

/** Paging: `page` from 1 (default 1), `pageSize` 1 to 500 (default 50). */
export interface PageOptions {
  page?: number;
  pageSize?: number;
}

/** With `codes`, paging is ignored and every active match is returned. */
export interface CodeListOptions extends PageOptions {
  codes?: string[];
}

export interface BridgeQuoteLineRequest {
  description?: string;
  /** A product's `sku`; links the line when an active product has it. */
  productCode?: string;
  /** More than 0, at most 10000. */
  qty: number;
  /** From 0 to 1000000. */
  unitPrice: number;
  /** A decimal fraction: 0.15 means 15%. */
  taxRate: number;
}

export interface BridgeCreateQuoteRequest {
  jobId?: string;
  customerName?: string;
  /** Required when `upsertByEmail` is true. */
  customerEmail?: string;
  customerPhone?: string;
  /** Match the customer by email, or create one. Default false. */
  upsertByEmail?: boolean;
  title?: string;
  quoteRef?: string;
  /** 1 to 200 lines. */
  lines: BridgeQuoteLineRequest[];
}

export interface BridgeCreateQuoteResult {
  id: string;
  ref: string;
  total: number;
  /** Relative deep link to the quote in the app. */
  url?: string;
}

export type LineType = "product" | "task" | "cost";
export type Unit = "T_ITEM" | "T_SQUARE_METRE" | "T_LINEAR_METRE";

export interface BridgeAddLineDto {
  /** Line name shown in the quote. */
  description?: string;
  /** Human-readable SKU or code; the line's work-object code. */
  productCode?: string;
  /** More than 0. */
  qty: number;
  /** SELL per unit, markup already applied. */
  unitPrice: number;
  /** BUY per unit; SELL when omitted. */
  costPrice?: number;
  /** 15 or 0.15 (both mean 15%). */
  taxRate: number;
  /** Room, area or zone. */
  location?: string;
  /** Dimensions, colours, model. */
  specification?: string;
  /** Default T_ITEM. */
  unit?: Unit;
  /** Lines sharing a key share a group id. */
  groupKey?: string;
  /** Default "product"; selects what `linkedItemId` points at. */
  lineType?: LineType;
  /** GUID of a product, task template or cost item (by `lineType`). */
  linkedItemId?: string;
  /** Section label, at most 100 characters after trimming. */
  section?: string;
  /** @deprecated Use `linkedItemId` with `lineType: "product"`. */
  productId?: string;
}

export type ToolType = "standalone" | "quoting_extension";

export type BridgeMethod =
  | "context.get"
  | "customers.list"
  | "products.list"
  | "taskTemplates.list"
  | "costItems.list"
  | "jobs.list"
  | "quotes.list"
  | "quotes.create"
  | "quotes.addLines";

/** What `bridge.ready()` resolves with. */
export interface BridgeReadyInfo {
  toolType: ToolType;
  /** The methods the host granted this tool. */
  methods: BridgeMethod[];
  sdkVersion: string;
  protocol: number;
}

export interface Bridge {
  /** "2.1.0". */
  readonly version: string;
  readonly context: {
    get(): Promise<BridgeContextDto>;
  };
  readonly customers: {
    list(options?: PageOptions): Promise<BridgePagedResult<BridgeCustomerDto>>;
  };
  readonly products: {
    list(options?: PageOptions): Promise<BridgePagedResult<BridgeProductDto>>;
  };
  readonly taskTemplates: {
    list(options?: CodeListOptions): Promise<BridgePagedResult<BridgeTaskTemplateDto>>;
  };
  readonly costItems: {
    list(options?: CodeListOptions): Promise<BridgePagedResult<BridgeCostItemDto>>;
  };
  readonly jobs: {
    list(options?: PageOptions): Promise<BridgePagedResult<BridgeJobDto>>;
  };
  readonly quotes: {
    list(options?: PageOptions): Promise<BridgePagedResult<BridgeQuoteDto>>;
    create(request: BridgeCreateQuoteRequest): Promise<BridgeCreateQuoteResult>;
    /** quoting_extension tools only; resolves once the lines are in the open quote. */
    addLines(lines: BridgeAddLineDto[]): Promise<void>;
  };
  /** Resolves once the host has answered; rejects with NOT_CONNECTED if none does. */
  ready(): Promise<BridgeReadyInfo>;
  /** Whether the host granted `method` to this tool (false until connected). */
  supports(method: BridgeMethod | string): boolean;
  readonly BridgeError: BridgeErrorConstructor;
}

declare global {
  interface Window {
    readonly bridge: Bridge;
  }
  const bridge: Bridge;
}
