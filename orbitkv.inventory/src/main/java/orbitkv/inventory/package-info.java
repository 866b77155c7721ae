/**
 * Source inventory contract (DESIGN §4): the identities of residences, intervals of the source
 * journal, subscription scopes and their digest, the inventory fence, and the source API.
 */
package orbitkv.inventory;
