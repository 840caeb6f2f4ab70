"""The tools' operations, in the documented language (docs/domain-format.md), as YAML text.

FRAGMENTS_YAML holds tau2's Order and User objects, which several tools return: they become the
domain's `fragments:`, and a tool ends in `- use: order_view` / `- use: user_view` (with the id,
`as: result`: the call's result is that view). `@NAME@` placeholders are filled in by tools.py. What
each tool does, with the evidence from tau2's code: docs/notes/tau2-retail-semantics.md.
"""

FRAGMENTS_YAML = r"""
order_view:
  # tau2's Order object for an order id (field order as tau2's model dumps it)
  params: [order_id]
  steps:
    - get: orders
      key: {order_id: $order_id}
      error: Order not found
      as: order
    - get: addresses
      key: {address_id: $order.address_id}
      as: address
    - list: order_items
      where: [{column: order_id, value: $order_id, skip_if_null: false}]
      order_by: [position]
      max_limit: null
      as: items
    - list: fulfillments
      where: [{column: order_id, value: $order_id, skip_if_null: false}]
      order_by: [position]
      max_limit: null
      as: fulfillments
    - list: payment_history
      where: [{column: order_id, value: $order_id, skip_if_null: false}]
      order_by: [position]
      max_limit: null
      as: payments
    - return:
        merge:
          - object:
              order_id: $order.order_id
              user_id: $order.user_id
              address: {pick: [$address, [address1, address2, city, country, state, zip]]}
              items: {map: {over: $items, as: r, to: {pick: [$r, [name, product_id, item_id, price, options]]}}}
              status: $order.status
              fulfillments: {map: {over: $fulfillments, as: r, to: {pick: [$r, [tracking_id, item_ids]]}}}
              payment_history: {map: {over: $payments, as: r, to: {pick: [$r, [transaction_type, amount, payment_method_id]]}}}
          - pick: [$order, [cancel_reason, exchange_items, exchange_new_items, exchange_payment_method_id, exchange_price_difference, return_items, return_payment_method_id]]

user_view:
  # tau2's User object for a user id; payment_methods is an object keyed by id, each method with
  # only its source's fields (tau2's CreditCard / Paypal / GiftCard models)
  params: [user_id]
  steps:
    - get: users
      key: {user_id: $user_id}
      error: User not found
      as: user
    - get: addresses
      key: {address_id: $user.address_id}
      as: address
    - list: payment_methods
      where: [{column: user_id, value: $user_id, skip_if_null: false}]
      order_by: [position]
      max_limit: null
      as: methods
    - list: orders
      where: [{column: user_id, value: $user_id, skip_if_null: false}]
      order_by: [user_position]
      max_limit: null
      as: orders
    - return:
        object:
          user_id: $user.user_id
          name: {pick: [$user, [first_name, last_name]]}
          address: {pick: [$address, [address1, address2, city, country, state, zip]]}
          email: $user.email
          payment_methods:
            object_from:
              - $methods.payment_method_id
              - map:
                  over: $methods
                  as: pm
                  to:
                    pick:
                      - {object: {source: $pm.source, id: $pm.payment_method_id, brand: $pm.brand, last_four: $pm.last_four, balance: $pm.balance}}
                      - {get_key: [{object: @PM_FIELDS@}, $pm.source]}
          orders: $orders.order_id
"""

OPERATIONS_YAML = r"""
calculate:
  # tau2: reject any character outside "0123456789+-*/(). ", evaluate as Python, return
  # str(round(float(value), 2)). `calc` is Python's arithmetic on exactly that alphabet.
  # WORKAROUND (no way to list a string's characters): the character test is "contains one of the
  # ASCII characters tau2 rejects, or a cased letter" (lower != upper); see the domain README.
  - require:
      not:
        or:
          - {ne: [{lower: $args.expression}, {upper: $args.expression}]}
          - {exists: {filter: {over: @BAD_CHARS@, as: c, where: {contains: [$args.expression, $c]}}}}
    error: Invalid characters in expression
  - let: value
    value: {calc: $args.expression}
  - fail: "Cannot evaluate the expression (a syntax error, a division by zero, or a value out of range)"
    when: {is_null: $value}
  - return: {to_string: {round: [{mul: [$value, 1.0]}, 2]}}

cancel_pending_order:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {eq: [$order.status, pending]}
    error: Non-pending order cannot be cancelled
  - require: {in: [$args.reason, [no longer needed, ordered by mistake]]}
    error: Invalid reason
  - list: payment_history
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: payments
  # one refund per payment-history entry (refunds included), gift cards credited at once
  - for_each: $payments
    as: p
    index: i
    steps:
      - create: payment_history
        values:
          order_id: $args.order_id
          position: {add: [{len: $payments}, $i]}
          transaction_type: refund
          amount: $p.amount
          payment_method_id: $p.payment_method_id
      - get: payment_methods
        key: {payment_method_id: $p.payment_method_id, user_id: $order.user_id}
        error: Payment method not found
        as: pm
      - update: payment_methods
        key: {payment_method_id: $pm.payment_method_id}
        set: {balance: {round: [{add: [$row.balance, $p.amount]}, 2]}}
        when: {eq: [$pm.source, gift_card]}
  - update: orders
    key: {order_id: $args.order_id}
    set: {status: cancelled, cancel_reason: $args.reason}
  - use: order_view
    with: {order_id: $args.order_id}
    as: result

exchange_delivered_order_items:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {eq: [$order.status, delivered]}
    error: Non-delivered order cannot be exchanged
  - list: order_items
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    max_limit: null
    as: order_items
  # the first requested id asked for more often than the order holds it
  - let: missing
    value: {filter: {over: $args.item_ids, as: x, where: {gt: [{count_of: [$args.item_ids, $x]}, {count_of: [$order_items.item_id, $x]}]}}}
  - fail: "Number of {missing.0} not found."
    when: {exists: $missing}
  - require: {eq: [{len: $args.item_ids}, {len: $args.new_item_ids}]}
    error: The number of items to be exchanged should match.
  - let: diff
    value: 0
  - for_each: $args.item_ids
    as: iid
    index: i
    steps:
      - let: new_iid
        value: {at: [$args.new_item_ids, $i]}
      - get: order_items
        where:
          - {column: order_id, value: $args.order_id, skip_if_null: false}
          - {column: item_id, value: $iid, skip_if_null: false}
        order_by: [position]
        error: "Number of {iid} not found."
        as: item
      - get: variants
        key: {item_id: $new_iid, product_id: $item.product_id}
        error: Variant not found
        as: variant
      - require: $variant.available
        error: "New item {new_iid} not found or available"
      - let: diff
        value: {add: [$diff, {sub: [$variant.price, $item.price]}]}
  - let: diff
    value: {round: [$diff, 2]}
  - get: payment_methods
    key: {payment_method_id: $args.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: pm
  - require: {not: {and: [{eq: [$pm.source, gift_card]}, {lt: [$pm.balance, $diff]}]}}
    error: Insufficient gift card balance to pay for the price difference
  - update: orders
    key: {order_id: $args.order_id}
    set:
      status: exchange requested
      exchange_items: {sort: $args.item_ids}
      exchange_new_items: {sort: $args.new_item_ids}
      exchange_payment_method_id: $args.payment_method_id
      exchange_price_difference: $diff
  - use: order_view
    with: {order_id: $args.order_id}
    as: result

find_user_id_by_email:
  # tau2: the first user, in its database order, whose email equals the argument ignoring case
  - get: users
    where: [{column: email, op: ieq, value: $args.email, skip_if_null: false}]
    order_by: [position]
    error: User not found
    as: user
  - return: $user.user_id

find_user_id_by_name_zip:
  # tau2: the first user, in its database order, whose first and last names equal the arguments
  # ignoring case and whose own address has exactly this zip
  - list: addresses
    where: [{column: zip, value: $args.zip, skip_if_null: false}]
    max_limit: null
    as: zip_addresses
  - get: users
    where:
      - {column: address_id, op: in, value: $zip_addresses.address_id, skip_if_null: false}
      - {column: first_name, op: ieq, value: $args.first_name, skip_if_null: false}
      - {column: last_name, op: ieq, value: $args.last_name, skip_if_null: false}
    order_by: [position]
    error: User not found
    as: user
  - return: $user.user_id

get_item_details:
  - get: variants
    key: {item_id: $args.item_id}
    error: Item not found
    as: v
  - return: {pick: [$v, [item_id, options, available, price]]}

get_order_details:
  - use: order_view
    with: {order_id: $args.order_id}
    as: result

get_product_details:
  - get: products
    key: {product_id: $args.product_id}
    error: Product not found
    as: product
  - list: variants
    where: [{column: product_id, value: $args.product_id, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: variants
  - return:
      object:
        name: $product.name
        product_id: $product.product_id
        variants: {index_by: [{map: {over: $variants, as: v, to: {pick: [$v, [item_id, options, available, price]]}}}, item_id]}

get_user_details:
  - use: user_view
    with: {user_id: $args.user_id}
    as: result

list_all_product_types:
  # tau2 returns json.dumps({name: product_id}, sort_keys=True): here the same object, keys in that order
  - list: products
    order_by: [name]
    max_limit: null
    as: products
  - return: {object_from: [$products.name, $products.product_id]}

modify_pending_order_address:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {contains: [$order.status, pending]}
    error: Non-pending order cannot be modified
  - update: addresses
    key: {address_id: $order.address_id}
    set: {address1: $args.address1, address2: $args.address2, city: $args.city, country: $args.country, state: $args.state, zip: $args.zip}
  - use: order_view
    with: {order_id: $args.order_id}
    as: result

modify_pending_order_items:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {eq: [$order.status, pending]}
    error: Non-pending order cannot be modified
  - list: order_items
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    max_limit: null
    as: order_items
  - let: missing
    value: {filter: {over: $args.item_ids, as: x, where: {gt: [{count_of: [$args.item_ids, $x]}, {count_of: [$order_items.item_id, $x]}]}}}
  - fail: "{missing.0} not found"
    when: {exists: $missing}
  - require: {eq: [{len: $args.item_ids}, {len: $args.new_item_ids}]}
    error: The number of items to be exchanged should match
  - let: diff
    value: 0
  - for_each: $args.item_ids
    as: iid
    index: i
    steps:
      - let: new_iid
        value: {at: [$args.new_item_ids, $i]}
      - require: {ne: [$iid, $new_iid]}
        error: The new item id should be different from the old item id
      - get: order_items
        where:
          - {column: order_id, value: $args.order_id, skip_if_null: false}
          - {column: item_id, value: $iid, skip_if_null: false}
        order_by: [position]
        error: "{iid} not found"
        as: item
      - get: variants
        key: {item_id: $new_iid, product_id: $item.product_id}
        error: Variant not found
        as: variant
      - require: $variant.available
        error: "New item {new_iid} not found or available"
      # the price difference is not rounded (tau2 stores e.g. 0.04999999999999716)
      - let: diff
        value: {add: [$diff, {sub: [$variant.price, $item.price]}]}
  - get: payment_methods
    key: {payment_method_id: $args.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: pm
  - require: {not: {and: [{eq: [$pm.source, gift_card]}, {lt: [$pm.balance, $diff]}]}}
    error: Insufficient gift card balance to pay for the new item
  - count: payment_history
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    as: n_payments
  - create: payment_history
    values:
      order_id: $args.order_id
      position: $n_payments
      transaction_type: {if: [{gt: [$diff, 0]}, payment, refund]}
      amount: {abs: $diff}
      payment_method_id: $args.payment_method_id
  - update: payment_methods
    key: {payment_method_id: $pm.payment_method_id}
    set: {balance: {round: [{sub: [$row.balance, $diff]}, 2]}}
    when: {eq: [$pm.source, gift_card]}
  # tau2 quirk, reproduced: every modified line takes the price and options of the LAST new variant
  # ($variant after the loop above is the last pass's), not its own
  - let: last_variant
    value: $variant
  - for_each: $args.item_ids
    as: iid
    index: i
    steps:
      - get: order_items
        where:
          - {column: order_id, value: $args.order_id, skip_if_null: false}
          - {column: item_id, value: $iid, skip_if_null: false}
        order_by: [position]
        error: "{iid} not found"
        as: line
      - update: order_items
        key: {line_id: $line.line_id}
        set: {item_id: {at: [$args.new_item_ids, $i]}, price: $last_variant.price, options: $last_variant.options}
  - update: orders
    key: {order_id: $args.order_id}
    set: {status: pending (item modified)}
  - use: order_view
    with: {order_id: $args.order_id}
    as: result

modify_pending_order_payment:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {contains: [$order.status, pending]}
    error: Non-pending order cannot be modified
  - get: payment_methods
    key: {payment_method_id: $args.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: pm
  - list: payment_history
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: payments
  - let: first
    value: {at: [$payments, 0]}
  - require: {and: [{eq: [{len: $payments}, 1]}, {eq: [$first.transaction_type, payment]}]}
    error: There should be exactly one payment for a pending order
  - require: {ne: [$first.payment_method_id, $args.payment_method_id]}
    error: The new payment method should be different from the current one
  - require: {not: {and: [{eq: [$pm.source, gift_card]}, {lt: [$pm.balance, $first.amount]}]}}
    error: Insufficient gift card balance to pay for the order
  - create: payment_history
    values: {order_id: $args.order_id, position: 1, transaction_type: payment, amount: $first.amount, payment_method_id: $args.payment_method_id}
  - create: payment_history
    values: {order_id: $args.order_id, position: 2, transaction_type: refund, amount: $first.amount, payment_method_id: $first.payment_method_id}
  - update: payment_methods
    key: {payment_method_id: $pm.payment_method_id}
    set: {balance: {round: [{sub: [$row.balance, $first.amount]}, 2]}}
    when: {eq: [$pm.source, gift_card]}
  - get: payment_methods
    key: {payment_method_id: $first.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: old_pm
  - update: payment_methods
    key: {payment_method_id: $old_pm.payment_method_id}
    set: {balance: {round: [{add: [$row.balance, $first.amount]}, 2]}}
    when: {eq: [$old_pm.source, gift_card]}
  - use: order_view
    with: {order_id: $args.order_id}
    as: result

modify_user_address:
  - get: users
    key: {user_id: $args.user_id}
    error: User not found
    as: user
  - update: addresses
    key: {address_id: $user.address_id}
    set: {address1: $args.address1, address2: $args.address2, city: $args.city, country: $args.country, state: $args.state, zip: $args.zip}
  - use: user_view
    with: {user_id: $args.user_id}
    as: result

return_delivered_order_items:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {eq: [$order.status, delivered]}
    error: Non-delivered order cannot be returned
  - get: users
    key: {user_id: $order.user_id}
    error: User not found
    as: user
  - get: payment_methods
    key: {payment_method_id: $args.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: pm
  - get: payment_history
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    order_by: [position]
    optional: true
    as: first_payment
  - require: {or: [{eq: [$pm.source, gift_card]}, {eq: [$args.payment_method_id, $first_payment.payment_method_id]}]}
    error: Payment method should be the original payment method
  - list: order_items
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    max_limit: null
    as: order_items
  - require: {not: {exists: {filter: {over: $args.item_ids, as: x, where: {gt: [{count_of: [$args.item_ids, $x]}, {count_of: [$order_items.item_id, $x]}]}}}}}
    error: Some item not found
  - update: orders
    key: {order_id: $args.order_id}
    set: {status: return requested, return_items: {sort: $args.item_ids}, return_payment_method_id: $args.payment_method_id}
  - use: order_view
    with: {order_id: $args.order_id}
    as: result

transfer_to_human_agents:
  # tau2 writes nothing; here the transfer is recorded so that the state diff sees it (tasks ignore
  # the summary text and the time, as tau2 ignores the summary when comparing actions)
  - create: handoffs
    values: {summary: $args.summary}
  - return: Transfer successful
"""
