// Type definitions for @toolbridge/sdk/testing: a test host for a tool's own tests.

import type {
  BlockedRecord,
  CallRecord,
  Capability,
  EditorQuote,
  Host,
  HostContext,
  NavigateRequest,
  QuoteChange,
  ToastRequest,
  ToolSettings,
  ToolType,
} from "./host/toolbridge_host.js";
import type {
  BackendCustomer,
  BackendPermissions,
  BackendQuote,
  BackendRequest,
  BackendUser,
  DecimalString,
  FetchHandler,
  FetchInfo,
  FixtureRole,
  FixtureSettings,
  FixtureUnit,
  IssuedToken,
  JsonWebKeySet,
  MemoryBackend,
  TestFixtures,
} from "./memory/toolbridge_testkit.js";

export type {
  BackendCustomer,
  BackendPermissions,
  BackendQuote,
  BackendRequest,
  BackendUser,
  BlockedRecord,
  CallRecord,
  Capability,
  DecimalString,
  EditorQuote,
  FetchHandler,
  FetchInfo,
  FixtureRole,
  FixtureSettings,
  FixtureUnit,
  Host,
  HostContext,
  IssuedToken,
  JsonWebKeySet,
  MemoryBackend,
  NavigateRequest,
  QuoteChange,
  TestFixtures,
  ToastRequest,
  ToolSettings,
  ToolType,
};

/** `createTestHost`'s options. */
export interface TestHostOptions {
  /** What `ui.confirm` answers when no `answerConfirm` answer is queued (default false). */
  confirm?: boolean;
  /** Whether `ui.openQuote` takes the user to the quote (default true: it opens in the editor,
   * unless the open quote has unsaved changes). */
  navigate?: boolean;
  /** Where tool frames go (default: a new element at the end of the page, per tool). */
  container?: Element;
  /** Log every call and dropped message to the console. */
  debug?: boolean;
  /** The deadline of each backend request, in ms (default 5000). */
  requestTimeoutMs?: number;
  /** While offline, how often the host checks whether the server is back, in ms (the host's
   * default 10000; 0: only `setOnline(true)` brings it back). */
  connectivityCheckMs?: number;
}

/** `testHost.mount`'s options. */
export interface MountOptions {
  /** The tool page's URL on the test page's origin, e.g. "/my-tool/index.html". */
  entry: string;
  /** The tool's manifest type. */
  type: ToolType;
  /** The tool's install settings as it sees them (default: the fixtures' `settings` over the
   * defaults of their `manifest`; without either, the tool is offered no settings). */
  settings?: ToolSettings;
  /** Let the tool size its frame within these heights. */
  autoResize?: { min: number; max: number };
  /** The tool's slug (default "tool"). */
  slug?: string;
  /** The tool's name in toasts and dialogs (default: the slug). */
  title?: string;
  /** Where the frame goes. */
  container?: Element;
  /** Whether the tool is offered `auth.getToken` (default: the fixtures' manifest's
   * `permissions.identity`). The backend still refuses a token to a tool whose manifest does
   * not ask for it, as the platform does. */
  identity?: boolean;
  /** Whether the tool is offered `fetch` (default: whether the fixtures' manifest lists origins in
   * `permissions.connect`). The backend still refuses an origin the manifest does not list. */
  fetch?: boolean;
}

/** A `ui.confirm` the page was asked, and the answer it gave. */
export interface ConfirmRecord {
  tool: string;
  toolName: string;
  title: string;
  message: string;
  confirmLabel: string;
  cancelLabel: string;
  answer: boolean;
}

/** A `ui.openQuote` the page was asked, and whether it went. */
export interface NavigationRecord extends NavigateRequest {
  went: boolean;
}

/** A tool page mounted in a frame. */
export interface TestTool {
  readonly slug: string;
  readonly frame: HTMLIFrameElement;
  /** The tool page's document (same origin as the test page). */
  readonly document: Document;
  readonly window: Window;
  /** Whether the tool's bridge has connected. */
  readonly connected: boolean;
  /** The extensions the host offered this tool (empty until connected). */
  readonly capabilities: Capability[];
  /** The bridge calls this tool made. */
  readonly calls: CallRecord[];
  /** The first element of the tool's page matching `selector`; throws when there is none. */
  $<E extends Element = HTMLElement>(selector: string): E;
  /** Resolves once the tool's bridge has connected. */
  ready(options?: { timeout?: number }): Promise<true>;
  unmount(): void;
}

/** The real host module and the memory backend, with what the tool asked of them. */
export interface TestHost {
  /** The host module's `Host`. */
  readonly host: Host;
  /** The memory backend. */
  readonly backend: MemoryBackend;
  /** The quote open in the editor, with amounts and totals; null when none is open. */
  readonly quote: EditorQuote | null;
  /** Every quote the backend holds, in the order they were made. */
  readonly quotes: BackendQuote[];
  readonly toasts: ToastRequest[];
  readonly confirms: ConfirmRecord[];
  readonly navigations: NavigationRecord[];
  /** Every bridge call answered: method, outcome ("ok" or the error code), duration. */
  readonly calls: CallRecord[];
  readonly blocked: BlockedRecord[];
  readonly changes: QuoteChange[];
  /** The calls made to `method`. */
  callsTo(method: string): CallRecord[];
  /** Queues the answers of the next `ui.confirm` questions. */
  answerConfirm(...answers: boolean[]): void;
  /** Opens a quote the backend holds, by id or reference. */
  openQuote(idOrRef: string): Promise<EditorQuote>;
  mount(options: MountOptions): TestTool;
  /** An admin saves `values` as tool `slug`'s install settings (default "tool"): checked against
   * the fixtures' `manifest` (throws naming each refused key) and laid over its defaults; the
   * tool's frames hear `settings.changed`. Returns the settings the tool now sees. */
  setSettings(values: ToolSettings, slug?: string): ToolSettings;
  /** Changes the context the app gives its tools (time zone, currency, locale, units, theme):
   * the tools offered `context.changed` hear what changed. Throws naming a value its rule
   * refuses. */
  setContext(values: HostContext): void;
  /** Whether the app's server can be reached, as the host knows it. */
  readonly online: boolean;
  /** Takes the network away (`false`) or gives it back (`true`), as when the device loses its
   * connection: the page's window gets `offline` or `online`, and meanwhile every request fails
   * as a dropped connection does. Tools hear `connectivity.changed`; their calls that need the
   * server fail with `OFFLINE` without being sent, while `addLines` keeps working. `runTests`
   * gives the network back after each test. */
  setOnline(online: boolean): void;
  /** Registers the handler that answers the tools' `bridge.fetch` (`null` removes it): it gets
   * the request the platform's server would send, placeholders replaced, and answers a
   * `Response`. See `MemoryBackend.onFetch`. */
  onFetch(handler: FetchHandler | null): void;
  waitFor<T>(check: () => T | Promise<T>, options?: WaitOptions): Promise<T>;
  destroy(): void;
}

export interface WaitOptions {
  /** Milliseconds (default 5000). */
  timeout?: number;
  /** What is waited for, in the error. */
  message?: string;
}

/** A test host holding `fixtures`; throws an Error naming every mistake in them by its path. */
export function createTestHost(fixtures?: TestFixtures, options?: TestHostOptions): Promise<TestHost>;

/** Resolves with `check()`'s value once it is truthy; rejects after the timeout. */
export function waitFor<T>(check: () => T | Promise<T>, options?: WaitOptions): Promise<T>;

/** Sets a field of the tool's page and fires `input` and `change` (checkboxes: checked). */
export function fill(element: Element, value: string | number | boolean): void;

/** Clicks an element of the tool's page. */
export function click(element: HTMLElement): void;

export function assert(condition: unknown, message?: string): asserts condition;

/** Throws unless equal as JSON (objects in any key order). */
export function assertEqual(actual: unknown, expected: unknown, message?: string): void;

/** One test's outcome. */
export interface TestResult {
  name: string;
  ok: boolean;
  error?: string;
  ms: number;
}

/** Runs the tests in order (each within `timeout` ms, default 20000), destroys the test hosts
 * each left, shows the outcomes in the page and sets `window.toolbridgeTestResults`. */
export function runTests(
  tests: Record<string, () => Promise<void> | void>,
  options?: { timeout?: number },
): Promise<TestResult[]>;
