// Numbers, money, dates and labels in the tenant's culture (`cultureCode`, e.g. "en-NZ").

// Currencies for the cultures we know; any other culture gets plain numbers with 2 decimals.
const CURRENCY_BY_REGION = { NZ: "NZD", AU: "AUD", GB: "GBP", IE: "EUR", US: "USD", CA: "CAD", ZA: "ZAR" };

let locale;
let money = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Sets the culture for everything below (call after sign-in). */
export function setCulture(cultureCode) {
  try {
    locale = cultureCode ? Intl.getCanonicalLocales(cultureCode)[0] : undefined;
  } catch {
    locale = undefined;
  }
  const region = locale?.split("-")[1]?.toUpperCase();
  const currency = region ? CURRENCY_BY_REGION[region] : undefined;
  money = currency
    ? new Intl.NumberFormat(locale, { style: "currency", currency })
    : new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

export function formatMoney(value) {
  return typeof value === "number" && Number.isFinite(value) ? money.format(value) : "–";
}

export function formatNumber(value, maximumFractionDigits = 3) {
  return typeof value === "number" && Number.isFinite(value)
    ? new Intl.NumberFormat(locale, { maximumFractionDigits }).format(value)
    : "–";
}

/** `0.15` → "15%". */
export function formatRate(fraction) {
  return typeof fraction === "number" ? `${formatNumber(fraction * 100, 2)}%` : "–";
}

/** `31.84` (already a percentage) → "31.84%". */
export function formatPercent(value) {
  return typeof value === "number" ? `${formatNumber(value, 2)}%` : "–";
}

export function formatDate(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso ?? "") : new Intl.DateTimeFormat(locale, { dateStyle: "medium" }).format(date);
}

export function formatDateTime(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? String(iso ?? "")
    : new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short" }).format(date);
}

/** The date `days` after `iso`. */
export function addDays(iso, days) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString();
}

export function formatBytes(bytes) {
  if (typeof bytes !== "number") return "–";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${formatNumber(bytes / 1024, 1)} KB`;
  return `${formatNumber(bytes / (1024 * 1024), 1)} MB`;
}

export const UNIT_LABELS = { T_SQUARE_METRE: "m²", T_LINEAR_METRE: "m", T_ITEM: "each" };

export function unitLabel(unit) {
  return UNIT_LABELS[unit] ?? String(unit ?? "");
}

export const ROLE_LABELS = { super_user: "Super User", admin: "Admin", office: "Office", field: "Field" };

export const TOOL_TYPE_LABELS = { standalone: "Standalone", quoting_extension: "Quoting extension" };
