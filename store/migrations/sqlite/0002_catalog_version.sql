-- Catalog versions: a per-tenant counter that triggers bump on every change
-- to the tenant's catalog (products, their task sequences, task templates,
-- cost items), however the change is made. The store keeps in-memory copies
-- of catalog reads and uses them only while the counter is unchanged.

ALTER TABLE tenants ADD COLUMN catalog_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER products_inserted AFTER INSERT ON products BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1 WHERE id = NEW.tenant_id;
END;
CREATE TRIGGER products_updated AFTER UPDATE ON products BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1
    WHERE id IN (OLD.tenant_id, NEW.tenant_id);
END;
CREATE TRIGGER products_deleted AFTER DELETE ON products BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1 WHERE id = OLD.tenant_id;
END;

CREATE TRIGGER product_tasks_inserted AFTER INSERT ON product_tasks BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1
    WHERE id = (SELECT tenant_id FROM products WHERE id = NEW.product_id);
END;
CREATE TRIGGER product_tasks_updated AFTER UPDATE ON product_tasks BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1
    WHERE id IN (SELECT tenant_id FROM products WHERE id IN (OLD.product_id, NEW.product_id));
END;
CREATE TRIGGER product_tasks_deleted AFTER DELETE ON product_tasks BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1
    WHERE id = (SELECT tenant_id FROM products WHERE id = OLD.product_id);
END;

CREATE TRIGGER task_templates_inserted AFTER INSERT ON task_templates BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1 WHERE id = NEW.tenant_id;
END;
CREATE TRIGGER task_templates_updated AFTER UPDATE ON task_templates BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1
    WHERE id IN (OLD.tenant_id, NEW.tenant_id);
END;
CREATE TRIGGER task_templates_deleted AFTER DELETE ON task_templates BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1 WHERE id = OLD.tenant_id;
END;

CREATE TRIGGER cost_items_inserted AFTER INSERT ON cost_items BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1 WHERE id = NEW.tenant_id;
END;
CREATE TRIGGER cost_items_updated AFTER UPDATE ON cost_items BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1
    WHERE id IN (OLD.tenant_id, NEW.tenant_id);
END;
CREATE TRIGGER cost_items_deleted AFTER DELETE ON cost_items BEGIN
    UPDATE tenants SET catalog_version = catalog_version + 1 WHERE id = OLD.tenant_id;
END;
