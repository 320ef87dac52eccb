// Settings → Organisation (Admin and Super User): the time zone, currency, units and theme the
// organisation's pages and tools show things in (`/api/settings/organisation`); and Your
// preferences (`#/account`, every signed-in user, from their name in the header): their own time
// zone (`/api/session/preferences`), which wins over the organisation's for them alone. A saved
// change reaches every open page of the organisation (or only this user's) through the live
// stream, and from there every open tool as `context.changed`.

import { h, replace } from "/sdk/ui.js";
import { api, describeError } from "../api.js";
import { reloadContext } from "../context.js";
import { fieldErrors, focusHeading } from "../dom.js";
import { toast } from "../toast.js";
import { settingsNav } from "./settings-nav.js";

/** The time zones the browser knows, for the lists (the server checks against the IANA database). */
function timeZones() {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return [];
  }
}

const option = (value, label, selected) => h("option", { value, selected: selected ? true : null }, label);

/** A select of `values` (each `[value, label]`), with `chosen` selected. */
function select(id, values, chosen, describedBy) {
  const known = values.some(([value]) => value === chosen);
  const all = known || !chosen ? values : [[chosen, chosen], ...values];
  return h("select", { id, "aria-describedby": describedBy }, all.map(([value, label]) => option(value, label, value === chosen)));
}

/** Shows a failed save: each problem at its field, the rest under the form. */
function showProblems(error, errors, formError, form, submit) {
  const unplaced = (error.errors ?? []).filter((problem) => !errors.show(problem.path ?? "", problem.message));
  if (!error.errors?.length || unplaced.length) {
    formError.textContent = unplaced.length ? unplaced.map((p) => `${p.path}: ${p.message}`).join(" ") : describeError(error);
    formError.hidden = false;
  }
  (form.querySelector("[aria-invalid=true]") ?? submit).focus();
}

function organisationForm(current) {
  const zones = timeZones().map((zone) => [zone, zone]);
  const field = (id, label, control, hint) => {
    const error = h("p", { id: `${id}-error`, class: "field-error", hidden: true });
    return { error, element: h("div", { class: "field" }, h("label", { for: id }, label), hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null, control, error) };
  };
  const zone = select("org-time-zone", zones, current.timeZone, "org-time-zone-hint org-time-zone-error");
  const currency = h("input", { id: "org-currency", value: current.currency, maxlength: "3", autocomplete: "off", "aria-describedby": "org-currency-hint org-currency-error" });
  const units = select("org-units", [["metric", "Metric"], ["imperial", "Imperial"]], current.units, "org-units-error");
  const theme = select("org-theme", [["light", "Light"], ["dark", "Dark"]], current.theme, "org-theme-hint org-theme-error");
  const fields = {
    timeZone: field("org-time-zone", "Time zone", zone, "Times show in this zone, in the app and in tools."),
    currency: field("org-currency", "Currency", currency, "Its ISO 4217 code, such as NZD."),
    units: field("org-units", "Units", units),
    theme: field("org-theme", "Theme", theme, "Each user may choose their own with the switch in the header."),
  };
  const errors = fieldErrors({
    timeZone: [fields.timeZone.error, zone],
    currency: [fields.currency.error, currency],
    units: [fields.units.error, units],
    theme: [fields.theme.error, theme],
  });
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Save organisation");
  const form = h("form", { class: "stack", novalidate: true, "aria-labelledby": "org-title", on: { submit: async (event) => {
    event.preventDefault();
    errors.clear();
    formError.hidden = true;
    submit.disabled = true;
    try {
      await api.setOrganisation({ timeZone: zone.value, currency: currency.value.trim(), units: units.value, theme: theme.value });
      toast("The organisation's settings are saved.", "success");
      await reloadContext();
    } catch (error) {
      showProblems(error, errors, formError, form, submit);
    } finally {
      submit.disabled = false;
    }
  } } },
  h("h2", { id: "org-title" }, "Organisation"),
  Object.values(fields).map((item) => item.element),
  formError,
  h("div", { class: "actions" }, submit));
  return form;
}

function ownForm(own) {
  const zones = [["", "The organisation's"], ...timeZones().map((zone) => [zone, zone])];
  const zone = select("own-time-zone", zones, own.timeZone ?? "", "own-time-zone-hint own-time-zone-error");
  const zoneError = h("p", { id: "own-time-zone-error", class: "field-error", hidden: true });
  const errors = fieldErrors({ timeZone: [zoneError, zone] });
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Save my time zone");
  const form = h("form", { class: "stack", novalidate: true, "aria-labelledby": "own-title", on: { submit: async (event) => {
    event.preventDefault();
    errors.clear();
    formError.hidden = true;
    submit.disabled = true;
    try {
      await api.setPreferences({ timeZone: zone.value || null });
      toast("Your time zone is saved.", "success");
      await reloadContext();
    } catch (error) {
      showProblems(error, errors, formError, form, submit);
    } finally {
      submit.disabled = false;
    }
  } } },
  h("h2", { id: "own-title" }, "Time zone"),
  h("div", { class: "field" },
    h("label", { for: "own-time-zone" }, "Time zone"),
    h("p", { class: "hint", id: "own-time-zone-hint" }, "For you alone; the organisation's unless you choose one."),
    zone, zoneError),
  formError,
  h("div", { class: "actions" }, submit));
  return form;
}

export async function renderOrganisation(root) {
  replace(root, h("h1", {}, "Settings"), settingsNav("organisation"), h("p", { class: "muted" }, "Loading…"));
  focusHeading(root);
  try {
    const organisation = await api.organisation();
    replace(root, h("h1", {}, "Settings"), settingsNav("organisation"), organisationForm(organisation),
      h("p", { class: "muted" }, "Each person may choose a time zone of their own under ",
        h("a", { href: "#/account" }, "Your preferences"), " (their name at the top)."));
  } catch (error) {
    replace(root, h("h1", {}, "Settings"), settingsNav("organisation"), h("p", { class: "form-error", role: "alert" }, describeError(error)));
  }
  focusHeading(root);
  return {};
}

/** Your preferences: the signed-in user's own time zone, whatever their role. */
export async function renderAccount(root) {
  replace(root, h("h1", {}, "Your preferences"), h("p", { class: "muted" }, "Loading…"));
  focusHeading(root);
  try {
    const own = await api.preferences();
    replace(root, h("h1", {}, "Your preferences"),
      h("p", { class: "muted" }, "For you alone, on every device you sign in on. The theme switch at the top is yours too."),
      ownForm(own));
  } catch (error) {
    replace(root, h("h1", {}, "Your preferences"), h("p", { class: "form-error", role: "alert" }, describeError(error)));
  }
  focusHeading(root);
  return {};
}
