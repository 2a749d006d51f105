//! `printRoleBinding` and `printClusterRoleBinding`: name, `Kind/name` of the role, age, and
//! (wide) the users, groups and ServiceAccounts bound (`rbac.SubjectsStrings`).

use jiff::Timestamp;
use serde_json::Value;

use super::{creation_age, items, name_of, s, text};

pub(super) fn cells(binding: &Value, now: Timestamp) -> Vec<Value> {
    let role = &binding["roleRef"];
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in items(&binding["subjects"]) {
        let name = text(&subject["name"]);
        match text(&subject["kind"]) {
            "User" => users.push(name.to_string()),
            "Group" => groups.push(name.to_string()),
            "ServiceAccount" => {
                accounts.push(format!("{}/{name}", text(&subject["namespace"])));
            }
            _ => {}
        }
    }
    vec![
        s(name_of(binding)),
        s(format!("{}/{}", text(&role["kind"]), text(&role["name"]))),
        s(creation_age(binding, now)),
        s(users.join(", ")),
        s(groups.join(", ")),
        s(accounts.join(", ")),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kube::api::table::cells::fixtures::{ago, now};

    #[test]
    fn a_binding_row_names_its_role_and_each_kind_of_subject() {
        let rb = json!({
            "metadata": {"name": "read-pods", "creationTimestamp": ago(5)},
            "roleRef": {"kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "gantry", "namespace": "ml"},
                         {"kind": "User", "name": "alice"}, {"kind": "Group", "name": "ops"},
                         {"kind": "User", "name": "bob"}],
        });
        assert_eq!(
            cells(&rb, now()),
            vec![
                json!("read-pods"),
                json!("Role/pod-reader"),
                json!("5s"),
                json!("alice, bob"),
                json!("ops"),
                json!("ml/gantry")
            ]
        );
    }
}
