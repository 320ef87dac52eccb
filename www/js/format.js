// Numbers, money, dates and labels in the tenant's culture (`cultureCode`, e.g. "en-NZ"), currency
// and time zone (the user's own, else the organisation's): dates and times show in that zone. The
// formatting itself is the page helpers' `formatter` (/sdk/ui.js), the one tools use; this module
// holds the app's context and its own labels.

import { formatter } from "/sdk/ui.js";

let culture = formatter(undefined);

/** Sets the culture for everything below (call after sign-in). */
export function setCulture(cultureCode) {
  culture = formatter(cultureCode);
}

/** Sets the culture, currency and time zone of a context (`GET /api/session`) for everything below. */
export function setFormatContext(context) {
  culture = formatter(context);
}

/** The IANA time zone dates are shown in. */
export const timeZone = () => culture.timeZone;

export const formatMoney = (value) => culture.money(value);

export const formatNumber = (value, maximumFractionDigits = 3) => culture.number(value, maximumFractionDigits);

/** `0.15` → "15%". */
export function formatRate(fraction) {
  return typeof fraction === "number" ? culture.percent(fraction * 100) : "–";
}

/** `31.84` (already a percentage) → "31.84%". */
export const formatPercent = (value) => culture.percent(value);

export const formatDate = (iso) => culture.date(iso);

export const formatDateTime = (iso) => culture.dateTime(iso);

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
