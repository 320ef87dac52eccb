-- The context a tenant's pages and tools show things in, and each user's own: see
-- sqlite/0008_preferences.sql for what each column holds.

ALTER TABLE tenants ADD COLUMN time_zone TEXT COLLATE "C" NOT NULL DEFAULT 'UTC';
ALTER TABLE tenants ADD COLUMN currency TEXT COLLATE "C" NOT NULL DEFAULT 'USD';
ALTER TABLE tenants ADD COLUMN units TEXT COLLATE "C" NOT NULL DEFAULT 'metric';
ALTER TABLE tenants ADD COLUMN theme TEXT COLLATE "C" NOT NULL DEFAULT 'light';

UPDATE tenants SET currency = CASE upper(right(culture_code, 2))
    WHEN 'NZ' THEN 'NZD'
    WHEN 'AU' THEN 'AUD'
    WHEN 'GB' THEN 'GBP'
    WHEN 'CA' THEN 'CAD'
    WHEN 'IE' THEN 'EUR'
    WHEN 'DE' THEN 'EUR'
    WHEN 'FR' THEN 'EUR'
    WHEN 'NL' THEN 'EUR'
    WHEN 'ZA' THEN 'ZAR'
    WHEN 'SG' THEN 'SGD'
    WHEN 'IN' THEN 'INR'
    ELSE 'USD'
END;

ALTER TABLE users ADD COLUMN time_zone TEXT COLLATE "C";
ALTER TABLE users ADD COLUMN theme TEXT COLLATE "C";

ALTER TABLE live_events ADD COLUMN user_id TEXT COLLATE "C";
